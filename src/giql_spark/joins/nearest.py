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

import re

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from .. import spark_version
from .batch.nearest import CHROM, END, START, STRAND, nearest_group
from .spec import NearestSpec

# the aliases the JVM k-nearest join's two sides go by (references, targets)
_NR, _NT = "__gs_nr", "__gs_nt"


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
    t_other, r_other = tk.where(_malformed(stranded)), rk.where(_malformed(stranded))
    pairs = _jvm_pairs(t_good, r_good, k, stranded, t_names, r_names)
    # only the groups the other rows are in reach the kernel
    rest = kernel(t_other, _in_groups(r_good, t_other)).unionByName(kernel(_in_groups(tk.where(keyed), r_other), r_other))
    return pairs.unionByName(rest)


# the key columns :func:`_keyed` adds, by role
_KEYED = {"chrom": CHROM, "strand": STRAND, "start": START, "end": END}


def _keyed_ok(stranded: bool, cols: dict = _KEYED):
    """Rows whose group key can equal another's (a NULL chromosome or strand pairs with nothing);
    ``cols``: the key columns by role."""
    ok = F.col(cols["chrom"]).isNotNull()
    return ok & F.col(cols["strand"]).isNotNull() if stranded else ok


def _well_formed(stranded: bool, cols: dict = _KEYED):
    """Rows whose distances are the gaps between closed hulls ``[start, end - 1]``."""
    start, end = F.col(cols["start"]), F.col(cols["end"])
    ok = _keyed_ok(stranded, cols) & start.isNotNull() & end.isNotNull() & (start < end)
    return ok & ~F.col(cols["strand"]).isin(".", "?") if stranded else ok


def _malformed(stranded: bool, cols: dict = _KEYED):
    """Rows that can pair but are not well-formed (see :func:`_well_formed`)."""
    return _keyed_ok(stranded, cols) & ~F.coalesce(_well_formed(stranded, cols), F.lit(False))


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

    t, r = _NT, _NR
    keys = [CHROM, STRAND] if stranded else [CHROM]

    def side(alias):
        return [f"`{alias}`.`{c}`" for c in keys], (f"`{alias}`.`{START}`", f"`{alias}`.`{END}` - 1")

    (rk, rhull), (tk, thull) = side(r), side(t)
    joined = nearest_join(refs.alias(r), targets.alias(t), rk, rhull, tk, thull, k, how="inner", ties=True)
    return joined.select(*[F.col(f"`{t}`.`{n}`") for n in t_names], *[F.col(f"`{r}`.`{n}`") for n in r_names])


# -- a NEAREST's rows whole (planner.nodes.NearestRows) -----------------------------------------

_REF = "__gs_ref"


def _roles(node) -> tuple[dict, dict]:
    """The join's key roles of the outer rows (over their reference key) and of the targets,
    as :func:`_flat_keyed` takes them: role -> (SQL expression or None, the type read)."""
    stranded = node.spec.stranded
    _, chrom, start, end, strand = node.spec.reference
    t_alias, t_chrom, t_start, t_end, t_strand = node.spec.target

    def of(chrom, start, end, strand, expr):
        roles = {"chrom": (chrom, "string"), "start": (start, "bigint"), "end": (end, "bigint")}
        if stranded:
            roles["strand"] = (strand, "string")
        return {role: (f and expr(f), want) for role, (f, want) in roles.items()}

    return (of(chrom, start, end, strand, lambda f: node.keys[f]),
            of(t_chrom, t_start, t_end, t_strand, lambda f: f"`{t_alias}`.`{f}`"))


def _sides_keyed(outer: DataFrame, targets: DataFrame, node) -> tuple:
    """Both sides flat with their key roles: ``(outer, its structs, its roles' columns,
    targets, theirs, theirs)``; the outer's structs include the reference struct ``_REF``."""
    lroles, troles = _roles(node)
    left, left_structs, lcols = _flat_keyed(outer, "l", lroles, {_REF: list(node.keys.items())})
    right, right_structs, tcols = _flat_keyed(targets, "t", troles, {})
    return left, left_structs, lcols, right, right_structs, tcols


def rows_malformed(outer: DataFrame, targets: DataFrame, node) -> list[tuple[DataFrame, DataFrame, tuple, str]]:
    """The rows of either side the k-nearest join cannot rank as giql does, as
    ``(side, its such rows, a key of the question, why)``: rows that can pair (their
    chromosome, and strand when stranded, set) but whose distances are not the gaps between
    closed hulls (a NULL coordinate, a zero-length or reversed interval, a strand of '.' or
    '?'). giql ranks such rows by its own CASE, NULL distances first; the candidates' kernel
    pairs them, with the ranking joined back. Where neither side has one, :func:`rows`
    gives the NEAREST's rows whole."""
    stranded = node.spec.stranded
    left, _, lcols, right, _, tcols = _sides_keyed(outer, targets, node)
    return [
        (outer, left.where(_malformed(stranded, lcols)),
         ("nearest: malformed references", stranded, *node.keys.items()),
         "an outer row's reference interval has a NULL coordinate, no length or a strand the join cannot rank"),
        (targets, right.where(_malformed(stranded, tcols)),
         ("nearest: malformed targets", stranded, *node.spec.target),
         "a target has a NULL coordinate, no length or a strand the join cannot rank"),
    ]


def rows_sides(outer: DataFrame, targets: DataFrame, node) -> tuple[tuple, list, list]:
    """The k-nearest join's arguments (left, right, left keys, left hull, right keys, right
    hull), and how to rebuild each side's struct columns after the join (for :func:`rows`).

    A key that is a field of a side's struct, of the type the join reads, is that field's flat
    column: each row crosses the join with its chromosome and bounds once, not once more as
    the key and once more in the reference struct."""
    r, t = _NR, _NT
    stranded = node.spec.stranded
    left, left_structs, lcols, right, right_structs, tcols = _sides_keyed(outer, targets, node)
    left = left.where(_well_formed(stranded, lcols))
    right = right.where(_well_formed(stranded, tcols))
    keys = ["chrom", "strand"] if stranded else ["chrom"]
    return ((left.alias(r), right.alias(t),
             [f"`{r}`.`{lcols[c]}`" for c in keys], (f"`{r}`.`{lcols['start']}`", f"`{r}`.`{lcols['end']}` - 1"),
             [f"`{t}`.`{tcols[c]}`" for c in keys], (f"`{t}`.`{tcols['start']}`", f"`{t}`.`{tcols['end']}` - 1")),
            left_structs, right_structs)


_FIELD = re.compile(r"^`?([^`.]+)`?\.`?([^`.]+)`?$")


def _flat_keyed(df: DataFrame, tag: str, roles: dict, packs: dict) -> tuple[DataFrame, list, dict]:
    """``df`` flat (:func:`_flat`) with a column per key role, and how to rebuild its structs.

    ``roles``: role -> (SQL expression, or None for a NULL column; the type the join reads it
    as); ``packs``: the name of a struct to rebuild above the join -> its (field, SQL
    expression). An expression that is a struct field (``alias.field``) of the right type is
    read from that field's flat column; any other is computed below the join in a column of
    its own. Returns the flat frame, the structs to rebuild (with ``packs``) and each role's
    column name."""
    fields = {(f.name, g.name): g.dataType.simpleString() for f in df.schema.fields
              if isinstance(f.dataType, StructType) for g in f.dataType.fields}

    def field(expr: str | None, want: str | None):
        m = expr and _FIELD.match(expr.strip())
        hit = m and (m.group(1), m.group(2))
        return hit if hit in fields and (want is None or fields[hit] == want) else None

    added, named, packed = {}, {}, {}
    for role, (expr, want) in roles.items():
        if not field(expr, want):
            named[role] = f"__gs_{tag}k_{role}"
            added[named[role]] = (F.expr(expr) if expr else F.lit(None)).cast(want)
    for name, members in packs.items():
        for i, (_, expr) in enumerate(members):
            if not field(expr, None):
                packed[name, i] = f"__gs_{tag}p_{name}_{i}"
                added[packed[name, i]] = F.expr(expr)
    flat, structs = _flat(df.withColumns(added) if added else df, tag)
    at = {(name, g): col for name, members, _ in structs for g, col in members}
    cols = {role: named.get(role) or at[field(expr, want)] for role, (expr, want) in roles.items()}
    for name, members in packs.items():
        structs.append((name, [(f, packed.get((name, i)) or at[field(expr, None)])
                               for i, (f, expr) in enumerate(members)], None))
    return flat, structs, cols


def _flat(df: DataFrame, tag: str) -> tuple[DataFrame, list]:
    """``df`` with each struct column as one column per field, and per struct column
    ``(name, [(field, flat column)], NULL flag column or None)`` to rebuild it.

    The sides of giql's relations are one struct per alias. Built below the JVM join and
    read field by field above it, each struct was packed for every row of both sides, and
    Spark's optimizer cannot see through the join to drop it. Flat, the projection below
    the join is plain columns of the scan, and the struct rebuilt above it is taken apart
    again by the optimizer where only its fields are read."""
    cols, structs = [], []
    for i, f in enumerate(df.schema.fields):
        if not isinstance(f.dataType, StructType):
            cols.append(F.col(f"`{f.name}`"))
            continue
        fields = [(g.name, f"__gs_{tag}{i}_{j}") for j, g in enumerate(f.dataType.fields)]
        cols += [F.col(f"`{f.name}`").getField(g).alias(n) for g, n in fields]
        flag = f"__gs_{tag}{i}_null" if f.nullable else None  # a NULL struct is not one of NULLs
        if flag:
            cols.append(F.col(f"`{f.name}`").isNull().alias(flag))
        structs.append((f.name, fields, flag))
    return df.select(*cols), structs


def _rebuilt(side: str, structs: list) -> dict:
    """The struct columns :func:`_flat` took apart, by name, from the joined side ``side``."""
    out = {}
    for name, fields, flag in structs:
        packed = F.struct(*[F.col(f"`{side}`.`{n}`").alias(g) for g, n in fields])
        out[name] = F.when(~F.col(f"`{side}`.`{flag}`"), packed) if flag else packed
    return out


def rows_stats_sides(outer: DataFrame, targets: DataFrame, node) -> list:
    """Both sides with their intervals over the columns their files know, for the statistics."""
    from .spec import Interval

    _, chrom, start, end, _ = node.spec.reference
    t_alias, t_chrom, t_start, t_end, _ = node.spec.target
    q = lambda c: f"`{t_alias}`.`{c}`"  # noqa: E731
    return [(outer, Interval(node.keys[chrom], node.keys[start], node.keys[end])),
            (targets, Interval(q(t_chrom), q(t_start), q(t_end)))]


def _expand_stars(columns: list[str], df: DataFrame) -> list[str]:
    """``x.*`` of a struct column spelled out as its fields (Spark expands a star over a
    struct in a select list, not inside ``struct(...)``)."""
    out = []
    for c in columns:
        name = c[:-2].strip("`") if c.endswith(".*") else None
        if name is not None and name in df.columns:
            out.extend(f"`{name}`.`{f.name}` AS `{f.name}`" for f in df.schema[name].dataType.fields)
        else:
            out.append(c)
    return out


def rows(outer: DataFrame, targets: DataFrame, node, algo: str, sides: tuple | None = None) -> DataFrame:
    """Each well-formed outer row with its k nearest targets, packed as giql's ranked
    subquery packs them (:class:`~giql_spark.planner.nodes.NearestRows`), when
    :func:`rows_malformed` found no row the join cannot rank.

    For such rows giql's distance is the gap between closed hulls and its order
    ``(|distance|, start, end)`` the join's (gap, lo, hi) (see the module's notes), so the
    join's k nearest (exact ties at the k-th broken as ROW_NUMBER breaks them: any one) are
    the rows giql's ranking keeps. The candidates' filter is applied after the join, as the
    candidates path applies it before ranking: it keeps a distance cutoff's nearest rows. The
    rank is 1 for k = 1, else each target's dense rank among its outer row's (an outer row
    repeated gets the same targets, and ranks over the copies). ``sides``: what
    :func:`rows_sides` returned for these, if it was called."""
    from pyspark.sql import Window

    from .jvm import nearest_join

    (left, right, lk, lh, rk, rh), left_structs, right_structs = sides or rows_sides(outer, targets, node)
    r, t = _NR, _NT
    t_alias = node.spec.target[0]
    ref_alias = node.spec.reference[0]
    aliases = list(outer.columns)
    joined = nearest_join(left, right, lk, lh, rk, rh, node.spec.k, how="inner", ties=False, algo=algo)
    lcols, tcols = _rebuilt(r, left_structs), _rebuilt(t, right_structs)
    pairs = joined.select(*[lcols.get(a, F.col(f"`{r}`.`{a}`")).alias(a) for a in aliases],
                          tcols[t_alias].alias(t_alias), lcols[_REF].alias(ref_alias))
    if node.where:
        pairs = pairs.where(F.expr(node.where))
    cand = pairs.select(*[F.col(f"`{a}`") for a in aliases],
                        F.expr(f"struct({', '.join(_expand_stars(node.columns, pairs))})").alias(node.ranked_alias))
    if node.spec.k == 1:
        rank = F.lit(1)
    else:
        order = [F.expr(o) for o in node.order] + [F.col(f"`{node.ranked_alias}`")]
        rank = F.dense_rank().over(Window.partitionBy(*[F.col(f"`{a}`") for a in aliases]).orderBy(*order))
    fields = [F.col(f"`{node.ranked_alias}`.`{f.name}`") for f in cand.schema[node.ranked_alias].dataType.fields]
    return cand.select(*[F.col(f"`{a}`") for a in aliases], F.struct(*fields, rank.alias(node.rank)).alias(node.alias))
