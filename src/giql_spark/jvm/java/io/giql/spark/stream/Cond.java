package io.giql.spark.stream;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * A row's condition columns: its Spark row, kept in state, and a view of it whose fields are
 * read once. The condition reads the fields of nested structs (one per alias), and each read
 * of a struct from a Spark row makes a new row object; a row meets many others, so the view
 * keeps that cost per row rather than per pair.
 */
final class Cond {
  final UnsafeRow row;
  final InternalRow view;

  Cond(UnsafeRow row, Layout layout) {
    this.row = row;
    this.view = new GenericInternalRow(layout.read(row));
  }

  /**
   * How to read each field of a condition row, worked out once per side. The fields are one
   * struct per alias (jvm_state.projected), and Spark's generic {@code get(i, type)} tests the
   * type against a dozen classes before it reads a struct, for every field of every row.
   */
  static final class Layout implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private final DataType[] types;
    /** A struct field's field count; -1: any other type, read the generic way. */
    private final int[] structSize;

    Layout(StructType type) {
      int n = type.size();
      types = new DataType[n];
      structSize = new int[n];
      for (int i = 0; i < n; i++) {
        types[i] = type.fields()[i].dataType();
        structSize[i] = types[i] instanceof StructType ? ((StructType) types[i]).size() : -1;
      }
    }

    Object[] read(UnsafeRow row) {
      Object[] values = new Object[types.length];
      for (int i = 0; i < values.length; i++) {
        if (row.isNullAt(i)) continue;
        values[i] = structSize[i] >= 0 ? row.getStruct(i, structSize[i]) : row.get(i, types[i]);
      }
      return values;
    }
  }
}
