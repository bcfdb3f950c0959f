package io.giql.spark.stream;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;

import io.giql.spark.columns.Residual;

/** The join condition evaluated on a pair of rows with Spark's own expressions (only TRUE matches). */
final class Exact {
  private final Residual residual;
  private final JoinedRow joined = new JoinedRow();

  Exact(StreamRules rules, int partition) {
    this.residual = Residual.of(rules.condition, rules.joined, rules.leftInput, rules.rightInput,
        partition);
  }

  boolean holds(InternalRow l, InternalRow r) {
    return residual.holds(l, r, joined);
  }
}
