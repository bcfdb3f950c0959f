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

With giql-spark's JVM extension (``jvm=True``), the pairs of well-formed rows
(coordinates set, ``start < end``, a strand other than '.' or '?' when
stranded) come from the JVM k-nearest join instead, with the targets
broadcast as an interval index: for such rows giql's distance is exactly the
gap between the closed hulls ``[start, end - 1]`` and its key
``(distance, start, end)`` the join's (gap, lo, hi), so the join with its
k-th ties is the same candidate set. The kernel still pairs what remains,
which is disjoint from it: well-formed references with the other targets,
and the other references with every target.
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


def candidates(targets: DataFrame, refs: DataFrame, spec: NearestSpec, *, dry_run: bool = False,
               jvm: bool = False) -> DataFrame:
    """Pairs (target struct, reference struct) per :class:`~giql_spark.joins.spec.NearestSpec`;
    ``jvm``: those of well-formed rows from the JVM k-nearest join (see the module's notes)."""
    t_alias, t_chrom, t_start, t_end, t_strand = spec.target
    r_alias, r_chrom, r_start, r_end, r_strand = spec.reference
    out_schema = StructType(list(targets.schema.fields) + list(refs.schema.fields))
    t_names, r_names = list(targets.columns), list(refs.columns)
    k, stranded = spec.k, spec.stranded
    tk = _keyed(targets, t_alias, t_chrom, t_start, t_end, t_strand, stranded)
    rk = _keyed(refs, r_alias, r_chrom, r_start, r_end, r_strand, stranded)

    def per_group(t, r):
        return nearest_group(t, r, k, stranded, t_names, r_names)

    def kernel(t: DataFrame, r: DataFrame) -> DataFrame:
        cogrouped = t.groupBy(CHROM, STRAND).cogroup(r.groupBy(CHROM, STRAND))
        return spark_version.cogroup_apply_in_arrow(cogrouped, per_group, out_schema)

    if not jvm:
        return kernel(tk, rk)
    keyed = _keyed_ok(stranded)
    good = _well_formed(stranded)
    t_good, r_good = tk.where(good), rk.where(good)
    t_other = tk.where(keyed & ~F.coalesce(good, F.lit(False)))
    r_other = rk.where(keyed & ~F.coalesce(good, F.lit(False)))
    pairs = _jvm_pairs(t_good, r_good, k, stranded, t_names, r_names)
    # only the groups the other rows are in reach the kernel
    rest = kernel(t_other, _in_groups(r_good, t_other)).unionByName(kernel(_in_groups(tk.where(keyed), r_other), r_other))
    return pairs.unionByName(rest)


def _keyed_ok(stranded: bool):
    """Rows whose group key can equal another's (a NULL chromosome or strand pairs with nothing)."""
    ok = F.col(CHROM).isNotNull()
    return ok & F.col(STRAND).isNotNull() if stranded else ok


def _well_formed(stranded: bool):
    """Rows whose distances are the gaps between closed hulls ``[start, end - 1]``."""
    ok = _keyed_ok(stranded) & F.col(START).isNotNull() & F.col(END).isNotNull() & (F.col(START) < F.col(END))
    return ok & ~F.col(STRAND).isin(".", "?") if stranded else ok


def _in_groups(df: DataFrame, of: DataFrame) -> DataFrame:
    """``df``'s rows in a (chromosome, strand) group that ``of`` has rows in."""
    keys = F.broadcast(of.select(F.col(CHROM).alias("__gs_k1"), F.col(STRAND).alias("__gs_k2")).distinct())
    on = (df[CHROM] == keys["__gs_k1"]) & df[STRAND].eqNullSafe(keys["__gs_k2"])
    return df.join(keys, on, "left_semi")


def _jvm_pairs(targets: DataFrame, refs: DataFrame, k: int, stranded: bool, t_names: list[str],
               r_names: list[str]) -> DataFrame:
    """Each well-formed reference with its k nearest well-formed targets (and the targets tied
    with the k-th), by the JVM k-nearest join over the targets' index."""
    from .jvm import nearest_join

    t, r = "__gs_nt", "__gs_nr"
    keys = [CHROM, STRAND] if stranded else [CHROM]

    def side(alias):
        return [f"`{alias}`.`{c}`" for c in keys], (f"`{alias}`.`{START}`", f"`{alias}`.`{END}` - 1")

    (rk, rhull), (tk, thull) = side(r), side(t)
    joined = nearest_join(refs.alias(r), targets.alias(t), rk, rhull, tk, thull, k, how="inner", ties=True)
    return joined.select(*[F.col(f"`{t}`.`{n}`") for n in t_names], *[F.col(f"`{r}`.`{n}`") for n in r_names])
