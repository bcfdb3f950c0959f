"""The stateful processor of a stream-stream join, for ``transformWithStateInPandas``.

The operator's input is the union of both sides, each row tagged with its
side, a code (:mod:`.operator`), its key, order and prune values, hull and
the values of the columns the exact condition reads, and grouped by a
*bucket*: a hash of the key modulo a fixed number of buckets. A bucket's
state holds a map from key to that key's :class:`~.state.KeyState`, and the
bucket's totals (rows held per side).

Every micro-batch that reads data visits every bucket: besides the data,
each input partition adds one *tick* row per bucket. So each bucket emits
one metric row per batch with its exact totals, and the observed metrics of
the query (the sums over buckets) are the exact rows held in state, not
only those of the keys the batch touched.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from pyspark.sql.types import BinaryType, IntegerType, LongType, StringType, StructField, StructType

from ..spark_version import HAS_TRANSFORM_WITH_STATE

if HAS_TRANSFORM_WITH_STATE:
    from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
else:  # Spark 3.5: group_state.BucketJoin runs this processor through applyInPandasWithState
    StatefulProcessor, StatefulProcessorHandle = object, None

from . import METRICS
from .operator import BROKEN, MARKER, NO_MATCH, OK, Arrived, ContractError, JoinRules, Output, join_key
from .state import Held, KeyState

GROUP, SIDE, CODE, KEY = "__gs_group", "__gs_side", "__gs_code", "__gs_key"
ORDER, PRUNE, LO, HI, ROW = "__gs_ord", "__gs_prune", "__gs_lo", "__gs_hi", "__gs_row"
TICK = 2
#: Code of a row whose interval has start > end (the contract's other half).
REVERSED = 4
KIND, LROW, RROW = "__gs_kind", "__gs_l", "__gs_r"
#: Metric columns of the operator's output; observed under the names of :data:`METRICS`.
METRIC_COLUMNS = tuple(f"__gs_m_{m}" for m in METRICS)

_KEY_SCHEMA = StructType([StructField("key", StringType())])
_STATE_SCHEMA = StructType([StructField("state", BinaryType())])
_TOTALS_SCHEMA = StructType([StructField("buckets", IntegerType()), StructField("left", LongType()),
                             StructField("right", LongType())])


def value_column(i: int) -> tuple[str, str]:
    """The input columns of the ``i``-th evaluated value: the value (NULL read as a default) and its NULL flag."""
    return f"__gs_v{i}", f"__gs_n{i}"


def output_schema(how: str) -> StructType:
    rows = [StructField(LROW, StringType())] + ([] if how in ("semi", "anti") else [StructField(RROW, StringType())])
    return StructType([StructField(KIND, IntegerType())] + rows + [StructField(c, LongType()) for c in METRIC_COLUMNS])


class StreamJoinProcessor(StatefulProcessor):
    """Runs :func:`.operator.join_key` for every key of a bucket and keeps the bucket's state."""

    def __init__(self, rules: JoinRules, buckets: int, columns: list[str]):
        self.rules = rules
        self.buckets = buckets
        self.columns = list(columns)  # of the input, in order
        n_left = len(rules.value_paths[0])
        self.value_columns = ([value_column(i) for i in range(n_left)],
                              [value_column(n_left + i) for i in range(len(rules.value_paths[1]))])

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.keys = handle.getMapState("keys", _KEY_SCHEMA, _STATE_SCHEMA)
        self.totals = handle.getValueState("totals", _TOTALS_SCHEMA)

    def close(self) -> None:
        pass

    def handleInputRows(self, key, rows, timerValues):
        frames = list(rows)
        pdf = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
        # PySpark builds these frames from row tuples, which lose names that start with "_".
        pdf.columns = self.columns
        yield self.process(int(key[0]), pdf)

    def process(self, bucket: int, pdf: pd.DataFrame) -> pd.DataFrame:
        rules = self.rules
        out = Output()
        side = pdf[SIDE].to_numpy()
        code = pdf[CODE].to_numpy()
        data = side != TICK
        keeps = rules.keeps
        keyless = pdf[KEY].isna().to_numpy()
        for s in (0, 1):
            mine = data & (side == s)
            lone = np.flatnonzero(mine & keyless & (code == NO_MATCH))  # no key: no state to visit
            if keeps[s] and len(lone):
                texts = pdf[ROW].to_numpy(object)[lone]
                out.emit(texts, None, len(lone)) if s == 0 else out.emit(None, texts, len(lone))
            broken = np.flatnonzero(mine & ((code == BROKEN) | (code == REVERSED)))
            if len(broken):
                self._broken(s, pdf, broken, out)
        live = np.flatnonzero(data & ~keyless & ((code == OK) | (code == MARKER) | (code == NO_MATCH)))
        totals = self.totals.get()
        if totals is not None and totals[0] != self.buckets:
            raise ContractError(f"giql-spark: this query's state was written with {totals[0]} state buckets and "
                                f"it now runs with {self.buckets}; restart it with "
                                f"spark.giql.streaming.stateBuckets={totals[0]}")
        counts = [totals[1], totals[2]] if totals is not None else [0, 0]
        if len(live):
            sub = pdf.iloc[live]
            keys = sub[KEY].to_numpy(object)
            codes, uniques = pd.factorize(keys)
            order = np.argsort(codes, kind="stable")
            bounds = np.searchsorted(codes[order], np.arange(len(uniques) + 1))
            columns = self._columns(sub)
            for k, name in enumerate(uniques):
                idx = order[bounds[k]:bounds[k + 1]]
                self._key(str(name), idx, columns, out)
        for s in (0, 1):
            counts[s] += out.added[s] - out.pruned[s]
        if len(live) or totals is None:
            self.totals.update((self.buckets, int(counts[0]), int(counts[1])))
        return self._frame(out, counts)

    def _columns(self, sub: pd.DataFrame) -> dict:
        cols = {c: sub[c].to_numpy() for c in (SIDE, CODE, ORDER, PRUNE, LO, HI)}
        cols[ROW] = sub[ROW].to_numpy(object)
        for names in self.value_columns:
            for v, n in names:
                cols[v] = sub[v].to_numpy()
                cols[n] = sub[n].to_numpy().astype(bool, copy=False)
        return cols

    def _key(self, key: str, idx: np.ndarray, cols: dict, out: Output) -> None:
        found = self.keys.getValue((key,))
        if found is None:
            state = KeyState([self._empty(0), self._empty(1)], [None, None])
        else:
            state = KeyState.loads(found[0])
        arrived = []
        for s in (0, 1):
            rows = idx[cols[SIDE][idx] == s]
            held = Held(cols[PRUNE][rows].astype(np.int64), cols[LO][rows].astype(np.int64),
                        cols[HI][rows].astype(np.int64), np.zeros(len(rows), bool), cols[ROW][rows],
                        [(cols[v][rows], cols[n][rows]) for v, n in self.value_columns[s]])
            arrived.append(Arrived(cols[CODE][rows], cols[ORDER][rows].astype(np.int64), held))
        state = join_key(self.rules, state, arrived, key, out)
        self.keys.updateValue((key,), (state.dumps(),))

    def _empty(self, s: int) -> Held:
        kinds = self.rules.value_kinds[s]
        dtypes = [{"int": np.int64, "float": np.float64, "bool": bool}.get(k, object) for k in kinds]
        return Held.empty(len(kinds), dtypes)

    def _broken(self, s: int, pdf: pd.DataFrame, rows: np.ndarray, out: Output) -> None:
        side = self.rules.pruning.side(s)
        if side.late_rows == "drop":
            out.late[s] += len(rows)
            return
        i = rows[0]
        key, code, position = pdf[KEY].iloc[i], pdf[CODE].iloc[i], pdf[ORDER].iloc[i]
        needed = ", ".join(n.name for n in side.needed)
        if code == REVERSED:
            what = f"its interval has start > end (at {side.order} = {position})"
        else:
            what = (f"it has a NULL key or a NULL in {needed}, yet its condition could still hold, so it has no "
                    f"place in the order")
        raise ContractError(f"giql-spark: a row of stream {side.alias!r} on key {key!r} breaks the order "
                            f"contract: {what}; fix the input, or register the stream with late_rows='drop' to "
                            f"drop and count such rows")

    def _frame(self, out: Output, counts: list) -> pd.DataFrame:
        semi = self.rules.how in ("semi", "anti")
        n = sum(len(x) for x in out.left)
        frame = {KIND: np.zeros(n + 1, np.int32)}
        frame[KIND][n] = 1
        frame[LROW] = np.concatenate(out.left + [np.array([None], object)]) if n else np.array([None], object)
        if not semi:
            frame[RROW] = np.concatenate(out.right + [np.array([None], object)]) if n else np.array([None], object)
        values = (counts[0], counts[1], out.added[0], out.added[1], out.pruned[0], out.pruned[1],
                  out.late[0], out.late[1])
        for name, v in zip(METRIC_COLUMNS, values):
            col = np.zeros(n + 1, np.int64)
            col[n] = v
            frame[name] = col
        return pd.DataFrame(frame)
