"""Input and output: genomic files (BED, narrowPeak/broadPeak, VCF/BCF, GFF3/GTF,
SAM/BAM/CRAM), Parquet and CSV/TSV to and from Spark DataFrames."""

from giql_spark.io.formats import (
    ACCEPTED,
    COORDINATES,
    FORMATS,
    InputError,
    detect_format,
)
from giql_spark.io.readers import Source, read_path, read_source
from giql_spark.io.writers import WRITE_FORMATS, write_path

__all__ = [
    "ACCEPTED", "COORDINATES", "FORMATS", "WRITE_FORMATS", "InputError", "Source",
    "detect_format", "read_path", "read_source", "write_path",
]
