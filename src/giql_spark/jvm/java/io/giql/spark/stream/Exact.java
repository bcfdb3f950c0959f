package io.giql.spark.stream;

import java.util.IdentityHashMap;

import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.encoders.ExpressionEncoder;
import org.apache.spark.sql.catalyst.encoders.ExpressionEncoder$;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.types.StructType;

import io.giql.spark.columns.Residual;

/**
 * The join condition evaluated on a pair of rows, with Spark's own expression evaluation
 * (three-valued: only TRUE matches). Rows are converted to Spark's internal form once each per
 * batch.
 */
final class Exact {
  private final Residual residual;
  private final ExpressionEncoder.Serializer<Row> left;
  private final ExpressionEncoder.Serializer<Row> right;
  private final IdentityHashMap<Row, InternalRow> seen = new IdentityHashMap<>();
  private final JoinedRow joined = new JoinedRow();

  Exact(StreamRules rules, int partition) {
    this.residual = Residual.of(rules.condition, rules.joined, rules.leftInput, rules.rightInput,
        partition);
    this.left = serializer(rules.leftCond);
    this.right = serializer(rules.rightCond);
  }

  private static ExpressionEncoder.Serializer<Row> serializer(StructType t) {
    return ExpressionEncoder$.MODULE$.apply(t).createSerializer();
  }

  boolean holds(Row l, Row r) {
    return residual.holds(internal(l, left), internal(r, right), joined);
  }

  private InternalRow internal(Row row, ExpressionEncoder.Serializer<Row> s) {
    InternalRow found = seen.get(row);
    if (found == null) {
      found = s.apply(row).copy();
      seen.put(row, found);
    }
    return found;
  }

  /** Forgets the converted rows (the batch is done). */
  void clear() {
    seen.clear();
  }
}
