package io.giql.spark.stream;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The operator's first step over an input partition: passes each row on, with the copies of a
 * row whose hull crosses position ranges, and then adds, for every bucket, tick rows carrying
 * the newest order value each side reached on each key in the partition.
 *
 * <p>Copies: Spark gives each row its home unit (the range of its lo; bucket 0 for a wide row).
 * A row crossing ranges is copied here into each further range it crosses, in that range's
 * bucket; a wide row into every other bucket. Only such rows are copied; doing it in Spark
 * would put every row through an array and a generator.
 *
 * <p>Ticks: every bucket is visited in every batch that reads data (it reports its exact totals
 * and prunes even when no row of its own arrived), and a bucket holding a position range of a
 * key learns how far each side has gone on that key from rows that went to other ranges. The
 * rows pass through here rather than being read a second time for the ticks: Spark counts a
 * source read by two branches of a plan twice (4.x) or not at all (3.5) in a query's progress.
 */
final class Ticks implements MapPartitionsFunction<Row, Row> {
  private static final long serialVersionUID = 1L;
  private final StreamRules rules;

  Ticks(StreamRules rules) {
    this.rules = rules;
  }

  @Override
  public Iterator<Row> call(Iterator<Row> input) {
    Map<String, long[]> newest = new HashMap<>();
    UnsafeRow payload = new UnsafeRow(StreamRules.PAYLOAD);
    ArrayDeque<Row> copies = new ArrayDeque<>();
    Keys keys = new Keys();
    return new Iterator<Row>() {
      private boolean any;
      private Iterator<Row> ticks;

      @Override
      public boolean hasNext() {
        if (!copies.isEmpty()) return true;
        if (ticks == null) {
          if (input.hasNext()) return true;
          ticks = any ? ticks(newest) : java.util.Collections.emptyIterator();
        }
        return ticks.hasNext();
      }

      @Override
      public Row next() {
        if (!hasNext()) throw new java.util.NoSuchElementException();
        if (!copies.isEmpty()) return copies.poll();
        if (ticks != null) return ticks.next();
        Row r = input.next();
        any = true;
        byte[] bytes = (byte[]) r.get(StreamRules.PAYLOAD_COLUMN);
        payload.pointTo(bytes, bytes.length);
        int code = payload.getInt(StreamRules.CODE);
        if ((code == StreamRules.OK || code == StreamRules.MARKER) && !payload.isNullAt(StreamRules.KEY)) {
          long[] n = newest.computeIfAbsent(keys.of(payload), k -> new long[] {StreamRules.NONE, StreamRules.NONE});
          int s = payload.getInt(StreamRules.SIDE);
          n[s] = Math.max(n[s], payload.getLong(StreamRules.ORD));
        }
        if (code == StreamRules.OK && rules.width > 0) copy(bytes, payload, copies);
        return r;
      }
    };
  }

  /** The copies of a row (payload {@code p} over {@code bytes}) beyond its home unit. */
  private void copy(byte[] bytes, UnsafeRow p, ArrayDeque<Row> out) {
    if (p.getLong(StreamRules.RANGE) == StreamRules.WIDE) {
      for (int b = 1; b < rules.buckets; b++) out.add(copyOf(bytes, rules.group(b), StreamRules.WIDE));
      return;
    }
    long r0 = rules.rangeOf(p.getLong(StreamRules.LO)), r1 = rules.rangeOf(p.getLong(StreamRules.HI));
    if (r1 == r0) return;
    UTF8String key = p.isNullAt(StreamRules.KEY) ? null : p.getUTF8String(StreamRules.KEY).clone();
    for (long r = r0 + 1; r <= r1; r++) out.add(copyOf(bytes, rules.group(rules.bucket(key, r)), r));
  }

  private static Row copyOf(byte[] bytes, long group, long range) {
    byte[] b = bytes.clone();
    UnsafeRow c = StreamRules.payload(b);
    c.setLong(StreamRules.RANGE, range);
    c.setBoolean(StreamRules.HOME, false);
    return RowFactory.create(group, b);
  }

  private Iterator<Row> ticks(Map<String, long[]> newest) {
    List<Row> out = new ArrayList<>();
    UnsafeProjection tick = UnsafeProjection.create(rules.payloadType);
    for (int b = 0; b < rules.buckets; b++) {
      long g = rules.group(b);
      if (newest.isEmpty()) out.add(tick(tick, g, 0, null, StreamRules.NONE));
      for (Map.Entry<String, long[]> e : newest.entrySet()) {
        for (int s = 0; s < 2; s++) {
          if (e.getValue()[s] != StreamRules.NONE) out.add(tick(tick, g, s, e.getKey(), e.getValue()[s]));
        }
      }
    }
    return out.iterator();
  }

  private static Row tick(UnsafeProjection tick, long group, int side, String key, long order) {
    GenericInternalRow p = new GenericInternalRow(new Object[] {StreamRules.TICK, side,
        key == null ? null : UTF8String.fromString(key), 0L, false, order, 0L, 0L, 0L, null, null});
    return RowFactory.create(group, tick.apply(p).getBytes());
  }
}
