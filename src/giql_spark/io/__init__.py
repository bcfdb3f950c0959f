"""Input readers: BED, Parquet and CSV/TSV files into Spark DataFrames."""

from giql_spark.io.readers import InputError, detect_format, read_path

__all__ = ["InputError", "detect_format", "read_path"]
