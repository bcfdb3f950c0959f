"""One micro-batch of a stream-stream join on one key: probe, hold, prune.

:func:`join_key` is the whole algorithm for one key and one batch, without
Spark: given the key's state and the rows each side sent, it

1. outputs at once, when their side is preserved, the rows that can match
   nothing (a NULL the condition cannot get past); checks the order
   contract: a row below its side's newest order value minus
   ``max_disorder`` is late (it fails the query or is dropped and counted);
   an end marker closes the side's key;
2. finds candidate pairs — new left rows against all right rows (held and
   new), held left rows against new right rows — by hull overlap (the
   compiled interval-tree kernel), and, for join types that must know,
   which satisfy the exact condition (:mod:`.evaluate`);
3. adds the new rows to their side's held rows (SEMI and ANTI drop a left
   row once it matched: it will never be output again);
4. advances each side's newest order value and prunes both sides: a held
   row whose prune value is below the bound the other side's progress gives
   (:meth:`.bounds.Pruning.bound`) can match nothing more and is released;
   a preserved side's released rows that never matched are output then.

Outputs are arrays of row texts (JSON) for the left and right columns; None
stands for the missing side of an unmatched row.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from ..kernels.overlap import hull_overlaps
from .bounds import Pruning
from .contract import END
from .evaluate import Compiled, evaluate
from .state import Held, KeyState

#: Row codes, computed in Spark for each input row.
OK, NO_MATCH, BROKEN, MARKER = 0, 1, 2, 3


class ContractError(RuntimeError):
    """A row broke the order contract of its stream under ``late_rows="fail"``."""


@dataclass(frozen=True)
class JoinRules:
    """Everything the operator needs about the join, shipped to the executors."""

    how: str
    pruning: Pruning
    compiled: Compiled | None  # None: pairs are filtered in Spark (INNER)
    value_paths: tuple         # (left paths, right paths) of the evaluated columns
    value_kinds: tuple         # (left kinds, right kinds): "int" / "float" / "str" / "bool"
    names: tuple = ("left", "right")  # the sides' aliases, for messages

    @property
    def keeps(self) -> tuple[bool, bool]:
        """Whether each side's unmatched rows are output."""
        return self.how in ("left", "full", "anti"), self.how in ("right", "full")


@dataclass
class Arrived:
    """One side's rows of this batch on one key."""

    code: np.ndarray
    order: np.ndarray
    rows: Held


@dataclass
class Output:
    """Rows to emit (left texts, right texts; None for a missing side) and counters per side."""

    left: list = field(default_factory=list)
    right: list = field(default_factory=list)
    added: list = field(default_factory=lambda: [0, 0])
    pruned: list = field(default_factory=lambda: [0, 0])
    late: list = field(default_factory=lambda: [0, 0])

    def emit(self, left, right, n: int) -> None:
        if n:
            self.left.append(left if left is not None else np.full(n, None, object))
            self.right.append(right if right is not None else np.full(n, None, object))


def join_key(rules: JoinRules, state: KeyState, arrived: list[Arrived], key: str, out: Output) -> KeyState:
    """The key's state after this batch; rows and counters go to ``out``."""
    pruning = rules.pruning
    new: list[Held] = []
    newest = list(state.newest)
    for s in (0, 1):
        a = arrived[s]
        lone = np.flatnonzero(a.code == NO_MATCH)
        if rules.keeps[s] and len(lone):  # they can match nothing: unmatched at once
            texts = a.rows.rows[lone]
            out.emit(texts, None, len(lone)) if s == 0 else out.emit(None, texts, len(lone))
        ok = a.code == OK
        side = pruning.side(s)
        if newest[s] is not None and ok.any():
            floor = newest[s] - side.max_disorder
            late = ok & (a.order < floor)
            if late.any():
                if side.late_rows == "fail":
                    i = int(np.flatnonzero(late)[0])
                    raise ContractError(
                        f"giql-spark: a late row on stream {side.alias!r}, key {key!r}: {side.order} = "
                        f"{int(a.order[i])} is below the bound {floor} (newest {side.order} "
                        f"{newest[s]} - max_disorder {side.max_disorder}). Rows must arrive in non-decreasing "
                        f"{side.order} within each key; register the stream with max_disorder=N to allow N of "
                        f"disorder, or late_rows='drop' to drop and count such rows")
                out.late[s] += int(late.sum())
                ok &= ~late
        rows = a.rows.take(np.flatnonzero(ok))
        new.append(rows)
        if ok.any():
            top = int(a.order[ok].max())
            newest[s] = top if newest[s] is None else max(newest[s], top)
        if (a.code == MARKER).any():
            newest[s] = END

    held_l, held_r = state.held
    all_l = held_l.concat(new[0])
    all_r = held_r.concat(new[1])
    li, ri = _candidates(held_l, new[0], held_r, new[1])
    if rules.compiled is not None and len(li):
        match = _evaluate(rules, all_l, all_r, li, ri)
        li, ri = li[match], ri[match]
    if rules.how in ("semi", "anti"):
        hit = np.zeros(len(all_l), bool)
        hit[li] = True
        if rules.how == "semi":
            first = np.flatnonzero(hit & ~all_l.matched)
            out.emit(all_l.rows[first], None, len(first))
        # A left row that matched is never output again (SEMI) or at all (ANTI).
        out.pruned[0] += int(hit[: len(held_l)].sum())
        keep = np.flatnonzero(~hit)
        out.added[0] += int((~hit[len(held_l):]).sum())
        all_l = all_l.take(keep)
    else:
        out.emit(all_l.rows[li], all_r.rows[ri], len(li))
        if rules.compiled is not None:
            all_l.matched[li] = True
            all_r.matched[ri] = True
        out.added[0] += len(new[0])
    out.added[1] += len(new[1])

    held = [all_l.sorted(), all_r.sorted()]
    keeps = rules.keeps
    for s in (0, 1):
        o = 1 - s
        if newest[o] is None:
            continue  # the other side has sent nothing on this key: any row may still match
        bound = pruning.bound(s, newest[o] - pruning.side(o).max_disorder)
        held[s], released = held[s].cut(bound)
        out.pruned[s] += len(released)
        if keeps[s] and len(released):
            lone = np.flatnonzero(~released.matched)
            rows = released.rows[lone]
            out.emit(rows, None, len(lone)) if s == 0 else out.emit(None, rows, len(lone))
    return KeyState(held, newest)


def _candidates(held_l: Held, new_l: Held, held_r: Held, new_r: Held) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (left index, right index) into held+new of each side whose hulls share a point:
    new left rows against every right row, held left rows against new right rows."""
    nl_off, nr_off = len(held_l), len(held_r)
    parts_l, parts_r = [], []
    if len(new_l) and (nr_off or len(new_r)):
        lo = np.concatenate([held_r.lo, new_r.lo])
        hi = np.concatenate([held_r.hi, new_r.hi])
        q, t = hull_overlaps(new_l.lo, new_l.hi, lo, hi)
        parts_l.append(q + nl_off)
        parts_r.append(t)
    if nl_off and len(new_r):
        q, t = hull_overlaps(held_l.lo, held_l.hi, new_r.lo, new_r.hi)
        parts_l.append(q)
        parts_r.append(t + nr_off)
    if not parts_l:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate(parts_l).astype(np.int64), np.concatenate(parts_r).astype(np.int64)


_ARROW = {"int": pa.int64(), "float": pa.float64(), "str": pa.string(), "bool": pa.bool_()}


def _evaluate(rules: JoinRules, left: Held, right: Held, li: np.ndarray, ri: np.ndarray) -> np.ndarray:
    arrays = {}
    for held, idx, paths, kinds in ((left, li, rules.value_paths[0], rules.value_kinds[0]),
                                    (right, ri, rules.value_paths[1], rules.value_kinds[1])):
        for (values, nulls), path, kind in zip(held.values, paths, kinds):
            v, m = values[idx], nulls[idx]
            if kind == "str":
                v = np.where(m, None, v)
            arrays[path] = pa.array(v, _ARROW[kind], mask=m if kind != "str" else None)
    return evaluate(rules.compiled, arrays, len(li))
