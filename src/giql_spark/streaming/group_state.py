"""The stream-stream join on Spark 3.5, through ``applyInPandasWithState``.

Spark 3.5 has no ``transformWithStateInPandas``; its ``applyInPandasWithState``
gives each group (a state bucket) one state value instead of a map and a
value. :class:`BucketJoin` keeps the bucket's whole state — each key's
:class:`~.state.KeyState` and the bucket's totals — in that one value and
runs the same :class:`~.processor.StreamJoinProcessor` over it, so the join,
its pruning and its metrics are the ones the newer lines run.

PySpark 3.5 reads the per-group offsets of its state rows through pandas,
and with the pyarrow of today (26) those integers come back as floats that
``RecordBatch.slice`` rejects (a null struct's children are now null too, so
pandas widens them). :func:`patch_offsets` casts them back; it runs in every
Python worker that unpickles a :class:`BucketJoin`, because this module is
imported there to do so.
"""

from __future__ import annotations

import pickle

import pandas as pd
from pyspark.sql.types import BinaryType, StructField, StructType

from ..spark_version import LINE
from .operator import JoinRules
from .processor import StreamJoinProcessor

#: The state of one bucket: ``pickle`` of ``{"keys": {key: KeyState bytes}, "totals": tuple | None}``.
STATE_SCHEMA = StructType([StructField("bucket", BinaryType())])


class _MapState:
    """The part of ``MapState`` the processor uses, over a dict."""

    def __init__(self, values: dict):
        self.values = values

    def getValue(self, key: tuple):  # noqa: N802 - the MapState method name
        found = self.values.get(key[0])
        return None if found is None else (found,)

    def updateValue(self, key: tuple, value: tuple) -> None:  # noqa: N802
        self.values[key[0]] = value[0]


class _ValueState:
    """The part of ``ValueState`` the processor uses, over one slot."""

    def __init__(self, value):
        self.value = value

    def get(self):
        return self.value

    def update(self, value) -> None:
        self.value = tuple(value)


class BucketJoin:
    """The function given to ``applyInPandasWithState``: one bucket's rows of one micro-batch."""

    def __init__(self, rules: JoinRules, buckets: int, columns: list[str]):
        self.processor = StreamJoinProcessor(rules, buckets, columns)

    def __call__(self, key, frames, state):
        stored = pickle.loads(state.get[0]) if state.exists else {"keys": {}, "totals": None}
        proc = self.processor
        proc.keys, proc.totals = _MapState(stored["keys"]), _ValueState(stored["totals"])
        frames = list(frames)
        pdf = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
        pdf.columns = proc.columns
        out = proc.process(int(key[0]), pdf)
        state.update((pickle.dumps({"keys": proc.keys.values, "totals": proc.totals.value},
                                   protocol=pickle.HIGHEST_PROTOCOL),))
        yield out

    def __setstate__(self, values: dict) -> None:
        patch_offsets()
        self.__dict__.update(values)


def patch_offsets() -> None:
    """Make PySpark 3.5's state reader see its row offsets as integers (see the module's note)."""
    if LINE >= (4, 0):
        return
    import pyarrow as pa
    from pyspark.sql.pandas import serializers

    cls = serializers.ApplyInPandasWithStateSerializer
    if getattr(cls, "_giql_integer_offsets", False):
        return
    read = cls.arrow_to_pandas

    def arrow_to_pandas(self, arrow_column, *args, **kwargs):
        series = read(self, arrow_column, *args, **kwargs)
        kind = arrow_column.type
        if pa.types.is_struct(kind) and kind.get_field_index("startOffset") >= 0:
            series = series.map(_integer_offsets)
        return series

    cls.arrow_to_pandas = arrow_to_pandas
    cls._giql_integer_offsets = True


def _integer_offsets(info):
    if not info:
        return info
    return {**info, "startOffset": int(info["startOffset"]), "numRows": int(info["numRows"])}
