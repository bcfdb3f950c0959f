"""Feeding files to Spark's file stream source between triggers, and collecting what a query emits."""

from __future__ import annotations

import os
import random
import uuid

END = 2**60 - 1
SCHEMA = "chrom string, start bigint, `end` bigint, name string"


class Feed:
    """One directory per stream; :meth:`put` lands a Parquet file in it atomically (written aside, then renamed)."""

    def __init__(self, spark, root, names=("a", "b"), schema: str = SCHEMA):
        self.spark = spark
        self.root = str(root)
        self.schema = schema
        for n in names:
            os.makedirs(os.path.join(self.root, n), exist_ok=True)

    def path(self, name: str) -> str:
        return os.path.join(self.root, name)

    def stream(self, name: str):
        return self.spark.readStream.schema(self.schema).parquet(self.path(name))

    def put(self, name: str, rows) -> None:
        """Written by pyarrow, not by a Spark job: a test's time goes to the query under test."""
        if not rows:
            return
        import pyarrow as pa
        import pyarrow.parquet as pq
        from pyspark.sql.pandas.types import to_arrow_schema
        from pyspark.sql.types import _parse_datatype_string

        schema = to_arrow_schema(_parse_datatype_string(self.schema))
        table = pa.Table.from_pylist([dict(zip(schema.names, r)) for r in rows], schema=schema)
        tag = uuid.uuid4().hex
        tmp = os.path.join(self.root, f"_tmp_{tag}.parquet")
        pq.write_table(table, tmp)
        os.rename(tmp, os.path.join(self.path(name), f"{tag}.parquet"))


class Collect:
    """A foreachBatch sink keeping each batch's rows once (a replayed batch replaces itself), and the progress."""

    def __init__(self):
        self.batches: dict[int, list] = {}

    def __call__(self, df, batch_id: int) -> None:
        self.batches[batch_id] = [tuple(r) for r in df.collect()]

    @property
    def rows(self) -> list:
        return [r for b in sorted(self.batches) for r in self.batches[b]]


def sorted_rows(rng: random.Random, prefix: str, chroms=("chr1", "chr2"), n: int = 40, gap: int = 120,
                width: int = 300, nulls: bool = False) -> list[tuple]:
    """Intervals sorted by (chromosome, start), as a coordinate-sorted file; optionally a few NULL ends."""
    rows = []
    for c in chroms:
        pos = rng.randint(0, gap)
        for i in range(n):
            pos += rng.randint(0, gap)
            end = None if nulls and rng.random() < 0.05 else pos + rng.randint(0, width)
            rows.append((c, pos, end, f"{prefix}{c}_{i}"))
    return rows


def chunks(rng: random.Random, rows: list, k: int) -> list[list]:
    """``rows`` cut into ``k`` consecutive pieces of random sizes (some may be empty)."""
    cuts = sorted(rng.randint(0, len(rows)) for _ in range(k - 1))
    return [rows[i:j] for i, j in zip([0] + cuts, cuts + [len(rows)])]


def markers(chroms=("chr1", "chr2")) -> list[tuple]:
    """End markers closing each chromosome."""
    return [(c, END, END, "end") for c in chroms]
