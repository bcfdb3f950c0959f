"""Arrow types Spark cannot take, replaced by the nearest type it can.

Spark's Arrow reader has no unsigned integers, dictionaries, half floats,
64-bit offsets or views; nested types are converted field by field.
"""

from __future__ import annotations

import pyarrow as pa

__all__ = ["spark_safe_schema", "spark_safe_type"]

# Unsigned integers widen to the next signed type so no value changes;
# uint64 has no wider Spark integer and maps to int64 (values above 2^63-1
# do not occur in genomic files).
_UNSIGNED = {
    pa.uint8(): pa.int16(), pa.uint16(): pa.int32(), pa.uint32(): pa.int64(), pa.uint64(): pa.int64(),
}


def spark_safe_type(t: pa.DataType) -> pa.DataType:
    """The Arrow type Spark reads for values of type ``t`` (``t`` itself when Spark takes it)."""
    if pa.types.is_dictionary(t):
        return spark_safe_type(t.value_type)
    if t in _UNSIGNED:
        return _UNSIGNED[t]
    if pa.types.is_float16(t):
        return pa.float32()
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t) or pa.types.is_fixed_size_binary(t):
        return pa.binary()
    if pa.types.is_map(t):
        return pa.map_(spark_safe_type(t.key_type), spark_safe_type(t.item_type))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_list_view(t):
        return pa.list_(spark_safe_type(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, spark_safe_type(f.type)) for f in t])
    return t


def spark_safe_schema(schema: pa.Schema) -> pa.Schema:
    return pa.schema([pa.field(f.name, spark_safe_type(f.type)) for f in schema])
