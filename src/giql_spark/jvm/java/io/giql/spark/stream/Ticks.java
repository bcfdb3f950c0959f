package io.giql.spark.stream;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.unsafe.types.UTF8String;

import scala.Tuple2;

/**
 * The operator's first step over an input partition: passes each row on with the state's
 * grouping key of its home unit, with the copies of a row whose hull crosses position ranges,
 * and then adds, for every bucket, tick rows carrying the newest order value each side reached
 * on each key in the partition.
 *
 * <p>Rows come and go as their payload's bytes (and the group), so the encoders around this
 * step copy one binary value per row rather than build a row object. The group is computed
 * here, from the payload's key and range, by the one rule the copies use too
 * ({@link StreamRules#bucket}).
 *
 * <p>Copies: Spark gives each row its home range (that of its lo, or WIDE), and this step its
 * home unit's bucket (bucket 0 for a wide row). A row crossing ranges is copied here into each
 * further range it crosses, in that range's bucket; a wide row into every other bucket. Only
 * such rows are copied; doing it in Spark would put every row through an array and a
 * generator.
 *
 * <p>Ticks: every bucket is visited in every batch that reads data (it reports its exact totals
 * and prunes even when no row of its own arrived), and a bucket holding a position range of a
 * key learns how far each side has gone on that key from rows that went to other ranges. The
 * rows pass through here rather than being read a second time for the ticks: Spark counts a
 * source read by two branches of a plan twice (4.x) or not at all (3.5) in a query's progress.
 */
final class Ticks implements MapPartitionsFunction<byte[], Tuple2<Long, byte[]>> {
  private static final long serialVersionUID = 1L;
  private final StreamRules rules;

  Ticks(StreamRules rules) {
    this.rules = rules;
  }

  @Override
  public Iterator<Tuple2<Long, byte[]>> call(Iterator<byte[]> input) {
    Map<String, long[]> newest = new HashMap<>();
    UnsafeRow payload = new UnsafeRow(StreamRules.PAYLOAD);
    ArrayDeque<Tuple2<Long, byte[]>> copies = new ArrayDeque<>();
    Keys keys = new Keys();
    return new Iterator<Tuple2<Long, byte[]>>() {
      private boolean any;
      private Iterator<Tuple2<Long, byte[]>> ticks;
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
      public Tuple2<Long, byte[]> next() {
        if (!hasNext()) throw new java.util.NoSuchElementException();
        if (!copies.isEmpty()) return copies.poll();
        if (ticks != null) return ticks.next();
        byte[] bytes = input.next();
        any = true;
        payload.pointTo(bytes, bytes.length);
        int code = payload.getInt(StreamRules.CODE);
        if ((code == StreamRules.OK || code == StreamRules.MARKER) && !payload.isNullAt(StreamRules.KEY)) {
          long[] n = newest.computeIfAbsent(keys.of(payload), k -> new long[] {StreamRules.NONE, StreamRules.NONE});
          int s = payload.getInt(StreamRules.SIDE);
          n[s] = Math.max(n[s], payload.getLong(StreamRules.ORD));
        }
        if (code == StreamRules.OK && rules.width > 0) copy(bytes, payload, keys, copies);
        return new Tuple2<>(home(payload), bytes);
      }

      /** The group of the row's home unit: bucket 0 for a wide row or a NULL key. */
      private long home(UnsafeRow p) {
        long range = p.getLong(StreamRules.RANGE);
        return rules.group(range == StreamRules.WIDE ? 0 : rules.bucket(keys, p, range));
      }
    };
  }

  /** The copies of a row (payload {@code p} over {@code bytes}) beyond its home unit. */
  private void copy(byte[] bytes, UnsafeRow p, Keys keys, ArrayDeque<Tuple2<Long, byte[]>> out) {
    if (p.getLong(StreamRules.RANGE) == StreamRules.WIDE) {
      for (int b = 1; b < rules.buckets; b++) out.add(copyOf(bytes, rules.group(b), StreamRules.WIDE));
      return;
    }
    long r0 = rules.rangeOf(p.getLong(StreamRules.LO)), r1 = rules.rangeOf(p.getLong(StreamRules.HI));
    if (r1 == r0) return;
    for (long r = r0 + 1; r <= r1; r++) {
      out.add(copyOf(bytes, rules.group(rules.bucket(keys, p, r)), r));
    }
  }

  private static Tuple2<Long, byte[]> copyOf(byte[] bytes, long group, long range) {
    byte[] b = bytes.clone();
    UnsafeRow c = StreamRules.payload(b);
    c.setLong(StreamRules.RANGE, range);
    c.setBoolean(StreamRules.HOME, false);
    return new Tuple2<>(group, b);
  }

  private Iterator<Tuple2<Long, byte[]>> ticks(Map<String, long[]> newest) {
    List<Tuple2<Long, byte[]>> out = new ArrayList<>();
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

  private static Tuple2<Long, byte[]> tick(UnsafeProjection tick, long group, int side, String key, long order) {
    GenericInternalRow p = new GenericInternalRow(new Object[] {StreamRules.TICK, side,
        key == null ? null : UTF8String.fromString(key), 0L, false, order, 0L, 0L, 0L, null, null});
    return new Tuple2<>(group, tick.apply(p).getBytes());
  }
}
