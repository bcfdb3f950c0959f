package io.giql.spark.stream;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
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

  Cond(UnsafeRow row, StructType type) {
    this.row = row;
    Object[] values = new Object[type.size()];
    for (int i = 0; i < values.length; i++) {
      values[i] = row.isNullAt(i) ? null : row.get(i, type.fields()[i].dataType());
    }
    this.view = new GenericInternalRow(values);
  }
}
