package io.giql.spark.stream;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;

/**
 * For every bucket, tick rows carrying the newest order value each side reached on each key in
 * an input partition. It reads only a narrow projection of the union (key, side, code, order),
 * so the rows themselves are not converted twice.
 *
 * <p>So every bucket is visited in every batch that reads data (it reports its exact totals
 * and prunes even when no row of its own arrived), and a bucket holding a position range of a
 * key learns how far each side has gone on that key from rows that went to other ranges.
 */
final class Ticks implements MapPartitionsFunction<Row, Row> {
  private static final long serialVersionUID = 1L;
  /** Columns of the narrow projection this reads. */
  static final String[] READS = {StreamRules.COLUMNS[StreamRules.KEY],
      StreamRules.COLUMNS[StreamRules.SIDE], StreamRules.COLUMNS[StreamRules.CODE],
      StreamRules.COLUMNS[StreamRules.ORD]};
  private final int buckets;

  Ticks(int buckets) {
    this.buckets = buckets;
  }

  @Override
  public Iterator<Row> call(Iterator<Row> input) {
    if (!input.hasNext()) return java.util.Collections.emptyIterator();
    Map<String, long[]> newest = new HashMap<>();
    while (input.hasNext()) {
      Row r = input.next();
      int code = r.getInt(2);
      if ((code == StreamRules.OK || code == StreamRules.MARKER) && !r.isNullAt(0)) {
        long[] n = newest.computeIfAbsent(r.getString(0),
            k -> new long[] {StreamRules.NONE, StreamRules.NONE});
        int s = r.getInt(1);
        n[s] = Math.max(n[s], r.getLong(3));
      }
    }
    return ticks(newest);
  }
  private Iterator<Row> ticks(Map<String, long[]> newest) {
    List<Row> out = new ArrayList<>();
    for (int b = 0; b < buckets; b++) {
      if (newest.isEmpty()) out.add(tick(b, 0, null, StreamRules.NONE));
      for (Map.Entry<String, long[]> e : newest.entrySet()) {
        for (int s = 0; s < 2; s++) {
          if (e.getValue()[s] != StreamRules.NONE) out.add(tick(b, s, e.getKey(), e.getValue()[s]));
        }
      }
    }
    return out.iterator();
  }

  private static Row tick(int bucket, int side, String key, long order) {
    return RowFactory.create(bucket, StreamRules.TICK, side, key, 0L, false, order, 0L, 0L, 0L,
        null, null, null, null);
  }
}
