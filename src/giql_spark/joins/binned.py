"""Binned equi-join: intervals expanded to the fixed-size bins they touch.

Each side gets one row per bin its closed hull ``[lo, hi]`` touches
(``lo = least(start, end)``, ``hi = greatest(start, end)``, bins
``lo div B .. hi div B``); rows meet by an equi-join on (chromosome, bin) that
Spark runs as a hash or sort-merge join, entirely in the JVM. A pair whose
hulls share a point meets in every bin both touch; it is kept only in the first
of them, ``greatest(lo_left div B, lo_right div B)``, so each pair is produced
exactly once without a DISTINCT. ``div`` truncates toward zero, which is
monotone, and that is all the canonical-bin argument needs.

Outer, semi and anti joins need to know whether a row matched in any of its
bins. Rows get an id before they are expanded, and the decision is a window
over that id on the single joined result, so the id is computed once per row.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType
from sqlglot import exp

from ..band.sql import HULL_INF
from ..spark_sql import bound_sql
from .hull import pieces_sql
from .spec import JoinSpec
from .spec import quote as _quote

DEFAULT_BIN_SIZE = 100_000

_L, _R = "__gs_l", "__gs_r"


def _extent(spec: JoinSpec, lview: str, rview: str) -> tuple[str, str]:
    """SQL of ``[m, M]``: the least and greatest finite hull end over both sides.

    Scalar subqueries, run once. ``coalesce(.., 0)`` when no end is finite.
    """
    lows, highs = [], []
    for interval, view in ((spec.left, lview), (spec.right, rview)):
        _, start, end = interval.text
        finite = [f"CASE WHEN abs({x}) < {HULL_INF} THEN {x} END" for x in (start, end)]
        lows.append(f"(SELECT least({', '.join(f'min({x})' for x in finite)}) FROM {view})")
        highs.append(f"(SELECT greatest({', '.join(f'max({x})' for x in finite)}) FROM {view})")
    return f"coalesce(least({', '.join(lows)}), 0)", f"coalesce(greatest({', '.join(highs)}), 0)"


def _hull(spec: JoinSpec, side: str, extent: tuple[str, str] | None) -> tuple[str, str]:
    """SQL of a side's closed hull ``[lo, hi]``.

    A band join may give rows with NULLs hull ends of ``±HULL_INF`` (they
    match without limit), on either side or both: every hull is then clipped
    to ``extent``, the least and greatest finite hull end of both sides, so
    that no row expands into more bins than the data spans. Clipping keeps
    every meeting pair meeting: the shared part ``[p, q]`` of two hulls
    (``p`` the greater low end, ``q`` the lesser high end) holds ``p`` when
    ``p`` is finite and ``q`` when ``q`` is, and both lie in the extent;
    when neither is, both hulls cover the whole extent. (The other side's
    extent alone would not do: it is unbounded too when both sides have
    such rows.)
    """
    interval = spec.left if side == "left" else spec.right
    _, start, end = interval.text
    lo, hi = f"least({start}, {end})", f"greatest({start}, {end})"
    if extent is not None:
        low, high = extent
        clipped_lo, clipped_hi = f"greatest({lo}, {low})", f"least({hi}, {high})"
        # A row without hull ends (NULLs) stays without bins; GREATEST and
        # LEAST would otherwise give it the extent's.
        keep = f"{lo} IS NOT NULL AND {clipped_lo} <= {clipped_hi}"
        lo, hi = f"CASE WHEN {keep} THEN {clipped_lo} END", f"CASE WHEN {keep} THEN {clipped_hi} END"
    return lo, hi


def _expanded(view: str, hull: tuple[str, str], prefix: str, bin_size: int, keep_id: bool) -> str:
    source = f"(SELECT *, monotonically_increasing_id() AS {prefix}id FROM {view})" if keep_id else view
    lo, hi = hull
    # explode_outer keeps rows with a NULL coordinate: they match nothing but
    # an outer join must still return them.
    return (f"(SELECT *, {lo} AS {prefix}lo, "
            f"explode_outer({pieces_sql(lo, hi, bin_size, 'binned', 'bin')}) AS {prefix}bin FROM {source})")


def _struct_root(interval) -> str | None:
    """The column ``s`` when every column the interval reads is a field ``s.f``."""
    roots = {c.table if c.table and not c.args.get("db") else None
             for e in (interval.chrom, interval.start, interval.end) for c in e.find_all(exp.Column)}
    return roots.pop() if len(roots) == 1 else None


def _flattened(spec: JoinSpec, left: StructType, right: StructType) -> tuple[str, dict] | None:
    """The condition over flat columns, and per struct column its fields' flat names.

    A side's rows travel through the shuffle as a struct column and as the
    fields the join reads; carrying the fields once, flat, moves less. Only
    the struct holding a side's chromosome is flattened: an inner join drops
    every row whose chromosome is NULL, so a NULL struct is never output and
    rebuilding it from its fields is exact. None when the condition uses a
    struct other than field by field.
    """
    structs: dict = {}
    for prefix, schema, interval in ((_L, left, spec.left), (_R, right, spec.right)):
        root = _struct_root(interval)
        if root is None or root not in schema.fieldNames() or not isinstance(schema[root].dataType, StructType):
            continue
        fields = schema[root].dataType.fieldNames()
        if len(set(fields)) != len(fields):
            continue
        structs[root] = {f: f"{prefix}f{i}" for i, f in enumerate(fields)}
    if len(structs) < 2:
        return None
    tree = spec.full.copy()
    if tree.find(exp.Lambda):
        return None
    for col in list(tree.find_all(exp.Column)):
        parts = [p.name for p in col.parts]
        if parts[0] not in structs and not (len(parts) == 1 and parts[0] in structs):
            continue
        flat = structs.get(parts[0], {})
        if len(parts) != 2 or parts[1] not in flat or isinstance(col.parent, exp.Dot):
            return None
        col.replace(exp.column(flat[parts[1]]))
    return tree.sql(dialect="spark"), structs


def _inner_flat(spec, bin_size, lview, rview, left: StructType, right: StructType) -> str | None:
    found = _flattened(spec, left, right)
    if found is None:
        return None
    condition, structs = found
    extent = _extent(spec, lview, rview) if spec.unbounded else None
    sides = []
    for prefix, view, schema, (lo, hi) in ((_L, lview, left, _hull(spec, "left", extent)),
                                           (_R, rview, right, _hull(spec, "right", extent))):
        exprs, names = [], []
        for name in schema.fieldNames():
            if name in structs:
                exprs += [f"{_quote(name)}.{_quote(f)} AS {flat}" for f, flat in structs[name].items()]
                names += list(structs[name].values())
            else:
                exprs.append(_quote(name))
                names.append(_quote(name))
        # Flattened before the explode, so that no struct is copied per bin.
        flat = f"SELECT {', '.join(exprs)}, {lo} AS {prefix}lo, {hi} AS {prefix}hi FROM {view}"
        bins = pieces_sql(f"{prefix}lo", f"{prefix}hi", bin_size, "binned", "bin")
        sides.append(f"(SELECT {', '.join(names)}, {prefix}lo, explode({bins}) AS {prefix}bin FROM ({flat}))")
    out = []
    for name in [*left.fieldNames(), *right.fieldNames()]:
        if name in structs:
            fields = ", ".join(f"{flat} AS {_quote(f)}" for f, flat in structs[name].items())
            out.append(f"struct({fields}) AS {_quote(name)}")
        else:
            out.append(_quote(name))
    canonical = f"{_L}bin = greatest({_L}lo div {bin_size}, {_R}lo div {bin_size})"
    return (f"SELECT {', '.join(out)} FROM {sides[0]} __gs_lx JOIN {sides[1]} __gs_rx "
            f"ON {_L}bin = {_R}bin AND ({condition}) AND {canonical}")


def _sql(spec: JoinSpec, bin_size: int, lview: str, rview: str, left: StructType, right: StructType) -> str:
    how = spec.how
    left_cols, right_cols = left.fieldNames(), right.fieldNames()
    if how == "inner":
        flat = _inner_flat(spec, bin_size, lview, rview, left, right)
        if flat is not None:
            return flat
    extent = _extent(spec, lview, rview) if spec.unbounded else None
    lx = _expanded(lview, _hull(spec, "left", extent), _L, bin_size, how in ("left", "full", "anti", "semi"))
    rx = _expanded(rview, _hull(spec, "right", extent), _R, bin_size, how in ("right", "full"))
    # The condition's key equalities (the chromosome) are the other equi-join keys.
    on = f"{_L}bin = {_R}bin AND ({spec.full_condition})"
    canonical = f"{_L}bin = greatest({_L}lo div {bin_size}, {_R}lo div {bin_size})"
    left_out = ", ".join(map(_quote, left_cols))
    both_out = ", ".join(map(_quote, [*left_cols, *right_cols]))

    if how == "inner":
        return f"SELECT {both_out} FROM {lx} __gs_lx JOIN {rx} __gs_rx ON {on} AND {canonical}"
    if how == "semi":
        # A left row may match in several bins; one survivor per id.
        firsts = ", ".join(f"first({_quote(c)}) AS {_quote(c)}" for c in left_cols)
        return f"SELECT {firsts} FROM {lx} __gs_lx LEFT SEMI JOIN {rx} __gs_rx ON {on} GROUP BY {_L}id"

    spark_how = {"left": "LEFT OUTER", "anti": "LEFT OUTER", "right": "RIGHT OUTER", "full": "FULL OUTER"}[how]
    matched = f"CAST({_R}bin IS NOT NULL AND {_L}bin IS NOT NULL AS INT)"
    windows, keep = [], [f"(__gs_m = 1 AND {canonical})"]
    if how in ("left", "full", "anti"):
        windows.append(f"max(__gs_m) OVER (PARTITION BY {_L}id) AS __gs_ml")
        left_only = f"({_L}id IS NOT NULL AND __gs_ml = 0 AND ({_L}bin IS NULL OR {_L}bin = {_L}lo div {bin_size}))"
        keep = [left_only] if how == "anti" else [*keep, left_only]
    if how in ("right", "full"):
        windows.append(f"max(__gs_m) OVER (PARTITION BY {_R}id) AS __gs_mr")
        keep.append(f"({_R}id IS NOT NULL AND __gs_mr = 0 AND ({_R}bin IS NULL OR {_R}bin = {_R}lo div {bin_size}))")
    joined = f"SELECT *, {matched} AS __gs_m FROM {lx} __gs_lx {spark_how} JOIN {rx} __gs_rx ON {on}"
    out = left_out if how == "anti" else both_out
    return f"SELECT {out} FROM (SELECT *, {', '.join(windows)} FROM ({joined})) WHERE {' OR '.join(keep)}"


def join(left: DataFrame, right: DataFrame, spec: JoinSpec, bin_size: int = DEFAULT_BIN_SIZE, *,
         dry_run: bool = False) -> DataFrame:
    if bin_size < 1:
        raise ValueError(f"bin size must be a positive integer, got {bin_size}")
    # One SQL statement: every DataFrame step is a round trip to the JVM and
    # a fresh analysis, which cost more than the planning around them. The
    # sides are bound to the statement, so the result stands alone.
    text = _sql(spec, bin_size, "__gs_binned_left", "__gs_binned_right", left.schema, right.schema)
    return bound_sql(left.sparkSession, text, {"__gs_binned_left": left, "__gs_binned_right": right})
