package io.giql.spark.join.probe;

import org.apache.spark.sql.catalyst.expressions.UnsafeRow;

import io.giql.spark.index.IntervalIndex;

/**
 * A stream's keys to the index's groups, asked of the index only when the key changes (stream
 * rows come in runs of one chromosome far more often than not).
 */
final class GroupLookup {
  private final IntervalIndex idx;
  private UnsafeRow last;
  private int group = -1;
  /** Whether the last {@link #group} call saw a new key. */
  boolean changed;

  GroupLookup(IntervalIndex idx) {
    this.idx = idx;
  }

  /** The group of {@code key} (not NULL), negative where the index has none. */
  int group(UnsafeRow key) {
    if (last == null || !last.equals(key)) {
      group = idx.group(key);
      last = key.copy();
      changed = true;
    } else {
      changed = false;
    }
    return group;
  }
}
