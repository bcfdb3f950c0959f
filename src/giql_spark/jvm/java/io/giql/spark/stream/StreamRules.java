package io.giql.spark.stream;

import java.io.Serializable;
import java.util.Arrays;
import java.util.Map;

import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.unsafe.hash.Murmur3_x86_32;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

import scala.collection.immutable.Seq;

/**
 * What the operator knows of the join, decided on the driver and shipped to the tasks.
 *
 * <p>Each side's held rows are pruned by one affine bound: a row of side {@code s} can still
 * match a future row of the other side, whose order value is at least {@code P}, only while
 * its prune value is at least {@code P + offset[s]}. The planner derives the offsets by
 * interval arithmetic over the condition (the same arithmetic the batch band joins use) and
 * sends a join whose bound is not of that form to the Python operator.
 */
public final class StreamRules implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Row codes of the union, computed in Spark for each input row. */
  public static final int OK = 0, NO_MATCH = 1, BROKEN = 2, MARKER = 3, REVERSED = 4;
  /** The side of a tick row (its code holds the side whose progress it carries). */
  public static final int TICK = 2;
  /**
   * The range of a row too wide to copy into each range it crosses: kept in every bucket. No
   * position range has this number (ranges below zero are legitimate ones).
   */
  public static final long WIDE = Long.MIN_VALUE;
  /** No order value seen yet. */
  public static final long NONE = Long.MIN_VALUE;
  /** An order value at or above this closes its key on its side (end of stream). */
  public static final long END = (1L << 60) - 1;

  /**
   * The operator's rows after {@link Ticks}: the state's grouping key and the payload, the bytes
   * of one Spark row of the {@link #PAYLOAD} fields. One binary column crosses the shuffle and
   * the encoders of {@code flatMapGroupsWithState}, which would build an object for every field
   * of every row. The union Python builds is the payload column alone.
   */
  public static final String[] COLUMNS = {"__gs_group", "__gs_payload"};
  static final int GROUP = 0, PAYLOAD_COLUMN = 1;
  /**
   * Fields of the payload: side, code, key, range, home, order, prune, lo, hi, then {@code row}
   * (what the statement reads of the row: the output) and {@code cond} (what the condition reads,
   * evaluated here), both structs.
   */
  static final int SIDE = 0, CODE = 1, KEY = 2, RANGE = 3, HOME = 4, ORD = 5, PRUNE = 6, LO = 7,
      HI = 8, ROW = 9, COND = 10, PAYLOAD = 11;
  /** The payload's field names at the indices above; the type Python builds must match. */
  static final String[] PAYLOAD_FIELDS = {"side", "code", "key", "range", "home", "ord", "prune",
      "lo", "hi", "row", "cond"};
  public static final String[] METRICS = {"left_rows_in_state", "right_rows_in_state",
      "left_rows_added", "right_rows_added", "left_rows_pruned", "right_rows_pruned",
      "left_late_rows", "right_late_rows"};

  final String how;
  final int buckets;
  private final long[] groups;
  /** The payload's type (see {@link #payloadType}); a tick is a payload with side, code, key and order. */
  final StructType payloadType;
  /** Width of a position range; 0: one unit per key. */
  final long width;
  /** A row whose hull crosses more ranges than this is wide: kept whole in every bucket. */
  final long maxRanges;
  final long[] offset = new long[2];
  final long[] disorder = new long[2];
  final boolean[] drop = new boolean[2];
  final String[] alias = new String[2];
  final String[] order = new String[2];
  final String[] needed = new String[2];
  /** The rows as the statement reads them and as the condition does (carried as row bytes). */
  final StructType leftType;
  final StructType rightType;
  final StructType leftCond;
  final StructType rightCond;
  /** How each side's condition row is read into its {@link Cond} view. */
  private final Cond.Layout[] condLayout;
  /** The join condition over (left condition row, right condition row). */
  final Expression condition;
  final Seq<Attribute> joined;
  final Seq<Attribute> leftInput;
  final Seq<Attribute> rightInput;

  StreamRules(Map<String, String> c, StructType leftType, StructType rightType,
      StructType leftCond, StructType rightCond, Expression condition, Seq<Attribute> joined, Seq<Attribute> leftInput,
      Seq<Attribute> rightInput) {
    this.how = c.get("how");
    this.buckets = Integer.parseInt(c.get("buckets"));
    this.groups = groups(buckets);
    this.payloadType = payloadType(c.get("payload_type"));
    this.width = Long.parseLong(c.get("width"));
    this.maxRanges = Long.parseLong(c.get("max_ranges"));
    for (int s = 0; s < 2; s++) {
      String p = s == 0 ? "left_" : "right_";
      offset[s] = Long.parseLong(c.get(p + "offset"));
      disorder[s] = Long.parseLong(c.get(p + "disorder"));
      drop[s] = "drop".equals(c.get(p + "late_rows"));
      alias[s] = c.get(p + "alias");
      order[s] = c.get(p + "order");
      needed[s] = c.get(p + "needed");
    }
    this.leftType = leftType;
    this.rightType = rightType;
    this.leftCond = leftCond;
    this.rightCond = rightCond;
    this.condLayout = new Cond.Layout[] {new Cond.Layout(leftCond), new Cond.Layout(rightCond)};
    this.condition = condition;
    this.joined = joined;
    this.leftInput = leftInput;
    this.rightInput = rightInput;
  }

  /** The payload over its bytes (not copied). */
  static UnsafeRow payload(byte[] bytes) {
    UnsafeRow row = new UnsafeRow(PAYLOAD);
    row.pointTo(bytes, bytes.length);
    return row;
  }

  /** The bytes of side {@code s}'s output row in {@code payload} (a copy). */
  byte[] outputBytes(int s, UnsafeRow payload) {
    return payload.isNullAt(ROW) ? null : payload.getStruct(ROW, (s == 0 ? leftType : rightType).size()).getBytes();
  }

  /** Side {@code s}'s condition row in {@code payload} (not copied). */
  Cond condRow(int s, UnsafeRow payload) {
    StructType t = s == 0 ? leftCond : rightCond;
    return payload.isNullAt(COND) ? null : new Cond(payload.getStruct(COND, t.size()), condLayout[s]);
  }

  /**
   * The payload type as jvm_state.tagged builds it (the left side's; a tick's row and cond are
   * NULL, so either side's serves), checked against {@link #PAYLOAD_FIELDS}: the indices here
   * and the fields there cannot drift apart unnoticed. Every field is made nullable: a tick's
   * row and cond are NULL, which a projection of a non-nullable field would not check for.
   */
  static StructType payloadType(String json) {
    StructType t = (StructType) DataType.fromJson(json);
    if (!Arrays.equals(t.fieldNames(), PAYLOAD_FIELDS)) {
      throw new IllegalArgumentException("the payload's fields are " + String.join(", ", t.fieldNames())
          + ", expected " + String.join(", ", PAYLOAD_FIELDS));
    }
    StructField[] fields = new StructField[t.size()];
    for (int i = 0; i < fields.length; i++) {
      StructField f = t.fields()[i];
      fields[i] = new StructField(f.name(), f.dataType(), true, f.metadata());
    }
    return new StructType(fields);
  }

  /** The condition row of side {@code s} over its bytes (not copied). */
  Cond condRow(int s, byte[] bytes) {
    StructType t = s == 0 ? leftCond : rightCond;
    UnsafeRow row = new UnsafeRow(t.size());
    row.pointTo(bytes, bytes.length);
    return new Cond(row, condLayout[s]);
  }

  /** Whether side {@code s}'s unmatched rows are output. */
  boolean keeps(int s) {
    return s == 0 ? how.equals("left") || how.equals("full") || how.equals("anti")
        : how.equals("right") || how.equals("full");
  }

  boolean semiOrAnti() {
    return how.equals("semi") || how.equals("anti");
  }

  /** The seed of the key's hash (Spark's {@code xxhash64} default). */
  static final long SEED = 42L;

  /**
   * The bucket of unit (key, range), given the key's hash ({@link Keys#hash}): {@code
   * (pmod(xxhash64(key), buckets) + pmod(range, buckets)) % buckets}; a NULL key's units are in
   * bucket 0. {@link Ticks} gives each row the group of its home unit and each copy the group of
   * its further range by this one rule. A key's consecutive ranges take consecutive buckets: a
   * micro-batch of sorted streams covers a few neighbouring ranges of each key, which hashing
   * each range on its own spread over the tasks as unevenly as 65:35.
   */
  int bucket(long keyHash, long range) {
    long k = Math.floorMod(keyHash, (long) buckets);
    return (int) ((k + Math.floorMod(range, (long) buckets)) % buckets);
  }

  /** {@link #bucket(long, long)} of row {@code p}'s key ({@code keys} hashes it): 0 for a NULL key. */
  int bucket(Keys keys, UnsafeRow p, long range) {
    return p.isNullAt(KEY) ? 0 : bucket(keys.hash(p), range);
  }

  /** The state's grouping key of bucket {@code b} (see {@link #groups}). */
  long group(int b) {
    return groups[b];
  }

  /**
   * The state's grouping key of each bucket: the least ascending longs whose Spark hash (the
   * {@code Murmur3Hash} with seed 42 by which {@code HashPartitioning} places a group) is
   * congruent to the bucket number modulo the largest power of two not above {@code buckets}.
   * Consecutive buckets then go to consecutive state partitions whenever the partition count
   * divides that power (2, 4, 8 ... tasks); with the bucket numbers themselves as keys, Spark's
   * hash put 9 of 16 in one of two partitions. Depends on {@code buckets} alone, never on the
   * partition count, so a checkpoint's groups stay where its state is.
   */
  public static long[] groups(int buckets) {
    int mask = Integer.highestOneBit(Math.max(1, buckets)) - 1;
    long[] out = new long[buckets];
    long g = 0;
    for (int b = 0; b < buckets; b++) {
      while ((Murmur3_x86_32.hashLong(g, 42) & mask) != (b & mask)) g++;
      out[b] = g++;
    }
    return out;
  }

  /** The range holding position {@code x} (floor division: ranges below zero too). */
  long rangeOf(long x) {
    return Math.floorDiv(x, width);
  }

  /**
   * The lowest prune value of side {@code s} that can still match once the other side has
   * reached {@code progress}; {@code Long.MAX_VALUE} when nothing can (the other side ended).
   */
  long bound(int s, long progress) {
    int o = 1 - s;
    if (progress >= END) return Long.MAX_VALUE;
    return progress - disorder[o] + offset[s];
  }

  StructType outputType() {
    StructType t = new StructType()
        .add("__gs_kind", DataTypes.IntegerType, false)
        .add("__gs_l", DataTypes.BinaryType, true)
        .add("__gs_r", DataTypes.BinaryType, true);
    // NULL on an output row: only a bucket's metric row carries them
    for (String m : METRICS) t = t.add("__gs_m_" + m, DataTypes.LongType, true);
    return t;
  }
}
