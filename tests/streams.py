"""Feeding files to Spark's file stream source between triggers, and collecting what a query emits."""

from __future__ import annotations

import os
import random
import shutil
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
        if not rows:
            return
        tag = uuid.uuid4().hex
        tmp = os.path.join(self.root, f"_tmp_{tag}")
        self.spark.createDataFrame(rows, self.schema).coalesce(1).write.parquet(tmp)
        for f in os.listdir(tmp):
            if f.endswith(".parquet"):
                os.rename(os.path.join(tmp, f), os.path.join(self.path(name), f"{tag}.parquet"))
        shutil.rmtree(tmp)


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
