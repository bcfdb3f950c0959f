package io.giql.spark.stream;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
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
   * How to read each field of a condition row, worked out once per side: Spark's generic
   * {@code get(i, type)} tests the type against a dozen classes for every field of every row.
   */
  static final class Layout implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private static final int OTHER = 0, STRUCT = 1, LONG = 2, INT = 3, STRING = 4, DOUBLE = 5;
    private final DataType[] types;
    private final int[] kinds;
    private final int[] sizes;

    Layout(StructType type) {
      int n = type.size();
      types = new DataType[n];
      kinds = new int[n];
      sizes = new int[n];
      for (int i = 0; i < n; i++) {
        DataType t = type.fields()[i].dataType();
        types[i] = t;
        if (t instanceof StructType) {
          kinds[i] = STRUCT;
          sizes[i] = ((StructType) t).size();
        } else if (t.equals(DataTypes.LongType)) {
          kinds[i] = LONG;
        } else if (t.equals(DataTypes.IntegerType)) {
          kinds[i] = INT;
        } else if (t.equals(DataTypes.StringType)) {
          kinds[i] = STRING;
        } else if (t.equals(DataTypes.DoubleType)) {
          kinds[i] = DOUBLE;
        }
      }
    }

    Object[] read(UnsafeRow row) {
      Object[] values = new Object[kinds.length];
      for (int i = 0; i < values.length; i++) {
        if (row.isNullAt(i)) continue;
        switch (kinds[i]) {
          case STRUCT: values[i] = row.getStruct(i, sizes[i]); break;
          case LONG: values[i] = row.getLong(i); break;
          case INT: values[i] = row.getInt(i); break;
          case STRING: values[i] = row.getUTF8String(i); break;
          case DOUBLE: values[i] = row.getDouble(i); break;
          default: values[i] = row.get(i, types[i]);
        }
      }
      return values;
    }
  }
}
