"""k-nearest candidates for a correlated NEAREST, per chromosome (and strand).

Targets and references are grouped by chromosome (and strand when stranded)
and co-grouped; each group (:mod:`.batch.nearest`) runs the compiled kernel
:func:`giql_spark.kernels.nearest.nearest_candidates` on Arrow arrays, which
finds each reference's k nearest targets from a sorted index in
O(log n + k log n) instead of measuring every target. The output pairs are a
superset of the answer (exact ties at the k-th place included); giql's
ranking SQL above them picks the rows.

SQL sorts NULL distances first. A target with a NULL coordinate has a NULL
distance to every reference on its chromosome, and so does every target for a
reference with a NULL coordinate or, when stranded, a strand of '.' or '?';
those pairs are produced in full so that the ranking above sees them.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from .. import spark_version
from .batch.nearest import CHROM, END, START, STRAND, nearest_group
from .spec import NearestSpec


def _keyed(df: DataFrame, alias: str, chrom: str, start: str, end: str, strand: str | None, stranded: bool) -> DataFrame:
    col = lambda name: F.col(alias).getField(name)  # noqa: E731
    return df.withColumns({
        CHROM: col(chrom).cast("string"),
        STRAND: col(strand).cast("string") if stranded and strand else F.lit(None).cast("string"),
        START: col(start).cast("long"),
        END: col(end).cast("long"),
    })


def candidates(targets: DataFrame, refs: DataFrame, spec: NearestSpec, *, dry_run: bool = False) -> DataFrame:
    """Pairs (target struct, reference struct) per :class:`~giql_spark.joins.spec.NearestSpec`."""
    t_alias, t_chrom, t_start, t_end, t_strand = spec.target
    r_alias, r_chrom, r_start, r_end, r_strand = spec.reference
    out_schema = StructType(list(targets.schema.fields) + list(refs.schema.fields))
    t_names, r_names = list(targets.columns), list(refs.columns)
    k, stranded = spec.k, spec.stranded
    tk = _keyed(targets, t_alias, t_chrom, t_start, t_end, t_strand, stranded)
    rk = _keyed(refs, r_alias, r_chrom, r_start, r_end, r_strand, stranded)

    def per_group(t, r):
        return nearest_group(t, r, k, stranded, t_names, r_names)

    cogrouped = tk.groupBy(CHROM, STRAND).cogroup(rk.groupBy(CHROM, STRAND))
    return spark_version.cogroup_apply_in_arrow(cogrouped, per_group, out_schema)
