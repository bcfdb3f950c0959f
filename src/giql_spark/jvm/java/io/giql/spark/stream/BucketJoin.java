package io.giql.spark.stream;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.FlatMapGroupsWithStateFunction;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.streaming.GroupState;

import io.giql.spark.compat.UserErrors;

import static io.giql.spark.stream.StreamRules.*;

/**
 * One micro-batch of one bucket: probe, hold, prune.
 *
 * <ol>
 *   <li>Rows that can match nothing are output at once where their side is preserved; a row
 *       below its side's newest order value on its key minus {@code max_disorder} is late (the
 *       query fails with one line, or the row is dropped and counted); rows breaking the
 *       contract otherwise (a NULL the order needs, start &gt; end) likewise.
 *   <li>In each unit, new left rows meet every right row (held and new) and held left rows
 *       meet new right rows, by hull overlap. With position ranges a pair is output only in
 *       the range holding the larger of its two lo values, which both rows were copied to, so
 *       once; a wide row (kept in every bucket) pairs with the home copy of a narrow row, and
 *       two wide rows pair in bucket 0.
 *   <li>New rows are added to their unit's held rows (SEMI and ANTI drop a left row once it
 *       matched).
 *   <li>Each key's progress advances by the ticks, and every unit's rows whose prune value is
 *       below the bound of the other side's progress are released (a preserved side's
 *       unmatched ones are output then).
 * </ol>
 */
final class BucketJoin implements FlatMapGroupsWithStateFunction<Long, Row, byte[], Row> {
  private static final long serialVersionUID = 1L;
  private final StreamRules rules;
  private transient Exact exact;

  BucketJoin(StreamRules rules) {
    this.rules = rules;
  }

  private static final class Unit {
    final String key;
    final long range;
    Held[] held = {new Held(), new Held()};
    final Held[] fresh = {new Held(), new Held()};
    boolean[] hitHeld;
    boolean[] hitFresh;

    Unit(String key, long range) {
      this.key = key;
      this.range = range;
    }
  }

  /**
   * A batch's output rows, kept in blocks: one list grown by copying would copy a busy
   * bucket's millions of rows several times over (a twentieth of the task's time, profiled).
   * An output row's metric columns are NULL, which the encoder and the observed sums skip.
   */
  private static final class Out {
    private static final int BLOCK = 4096;
    private final List<Row[]> blocks = new ArrayList<>();
    private Row[] block;
    private int n = BLOCK;
    final long[] added = new long[2], pruned = new long[2], late = new long[2];

    void emit(byte[] l, byte[] r) {
      add(RowFactory.create(0, l, r, null, null, null, null, null, null, null, null));
    }

    void add(Row row) {
      if (n == BLOCK) {
        block = new Row[BLOCK];
        blocks.add(block);
        n = 0;
      }
      block[n++] = row;
    }

    /** The rows in the order added; each block is let go once read. */
    Iterator<Row> iterator() {
      final int last = n;
      return new Iterator<Row>() {
        private int b, i;

        @Override
        public boolean hasNext() {
          return b < blocks.size() && (b < blocks.size() - 1 || i < last);
        }

        @Override
        public Row next() {
          if (!hasNext()) throw new java.util.NoSuchElementException();
          Row row = blocks.get(b)[i];
          if (++i == BLOCK) {
            blocks.set(b++, null);
            i = 0;
          }
          return row;
        }
      };
    }

    void lone(int side, byte[] row) {
      if (side == 0) emit(row, null);
      else emit(null, row);
    }
  }

  private static String id(String key, long range) {
    return (key == null ? "\u0001" : key) + '\u0000' + range;
  }

  private static Unit unit(Map<String, Unit> units, String key, long range) {
    return units.computeIfAbsent(id(key, range), k -> new Unit(key, range));
  }

  @Override
  public Iterator<Row> call(Long group, Iterator<Row> input, GroupState<byte[]> state) {
    Map<String, long[]> progress = new HashMap<>();
    Map<String, Unit> units = new LinkedHashMap<>();
    if (state.exists()) decode(state.get(), progress, units);
    Map<String, long[]> reached = new HashMap<>();
    Out out = new Out();
    Keys keys = new Keys();
    Unit last = null;
    while (input.hasNext()) {
      UnsafeRow r = StreamRules.payload((byte[]) input.next().get(PAYLOAD_COLUMN));
      int side = r.getInt(SIDE);
      String key = keys.of(r);
      if (side == TICK) {
        if (key != null) {
          long[] n = reached.computeIfAbsent(key, k -> new long[] {NONE, NONE});
          int s = r.getInt(CODE);
          n[s] = Math.max(n[s], r.getLong(ORD));
        }
        continue;
      }
      int code = r.getInt(CODE);
      boolean home = r.getBoolean(HOME);
      if (code == NO_MATCH) {
        if (rules.keeps(side) && home) out.lone(side, rules.outputBytes(side, r));
      } else if (code == BROKEN || code == REVERSED) {
        if (!rules.drop[side]) throw broken(side, key, code, r.getLong(ORD));
        if (home) out.late[side]++;
      } else if (code == OK) {
        long[] p = progress.get(key);
        long ord = r.getLong(ORD);
        if (p != null && p[side] != NONE && ord < p[side] - rules.disorder[side]) {
          if (!rules.drop[side]) throw late(side, key, ord, p[side]);
          if (home) out.late[side]++;
          continue;
        }
        long range = r.getLong(RANGE);
        // a bucket's rows come unit by unit when the streams are sorted: no map lookup for those
        Unit u = last != null && last.range == range && java.util.Objects.equals(last.key, key) ? last
            : unit(units, key, range);
        last = u;
        u.fresh[side].add(r.getLong(PRUNE), r.getLong(LO),
            r.getLong(HI), false, home, rules.outputBytes(side, r), rules.condRow(side, r));
      }
    }
    join(group == rules.group(0), units, out);
    for (Map.Entry<String, long[]> e : reached.entrySet()) {
      long[] p = progress.computeIfAbsent(e.getKey(), k -> new long[] {NONE, NONE});
      for (int s = 0; s < 2; s++) p[s] = Math.max(p[s], e.getValue()[s]);
    }
    long[] held = prune(units, progress, out);
    state.update(encode(progress, units));
    long[] m = {held[0], held[1], out.added[0], out.added[1], out.pruned[0], out.pruned[1],
        out.late[0], out.late[1]};
    out.add(RowFactory.create(1, null, null, m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7]));
    return out.iterator();
  }

  // -- probe and hold --------------------------------------------------------------------------

  private void join(boolean first, Map<String, Unit> units, Out out) {
    boolean ranged = rules.width > 0;
    for (Unit u : units.values()) {
      if (u.range == WIDE) continue;
      u.hitHeld = new boolean[u.held[0].n];
      u.hitFresh = new boolean[u.fresh[0].n];
      long only = ranged ? u.range : Long.MIN_VALUE;
      probe(u, u, false, false, only, out);
      Unit w = ranged ? units.get(id(u.key, WIDE)) : null;
      if (w != null) {
        probe(u, w, true, false, Long.MIN_VALUE, out);
        probe(w, u, false, true, Long.MIN_VALUE, out);
      }
    }
    for (Unit w : units.values()) {
      if (w.range != WIDE) continue;
      w.hitHeld = new boolean[w.held[0].n];
      w.hitFresh = new boolean[w.fresh[0].n];
      if (first) probe(w, w, false, false, Long.MIN_VALUE, out);
    }
    for (Unit u : units.values()) {
      boolean[] keep = null;
      if (rules.semiOrAnti()) {
        keep = new boolean[u.fresh[0].n];
        for (int i = 0; i < keep.length; i++) keep[i] = !u.hitFresh[i];
        Held kept = new Held();
        for (int i = 0; i < u.held[0].n; i++) {
          if (u.hitHeld[i]) out.pruned[0]++;
          else kept.addFrom(u.held[0], i);
        }
        u.held[0] = kept;
      }
      for (int s = 0; s < 2; s++) {
        boolean[] k = s == 0 ? keep : null;
        for (int i = 0; i < u.fresh[s].n; i++) if (k == null || k[i]) out.added[s]++;
        u.held[s] = u.held[s].merged(u.fresh[s], k);
      }
    }
  }

  /**
   * New rows of {@code l} against every row of {@code r}, held rows of {@code l} against new
   * rows of {@code r}; {@code homeL}/{@code homeR}: only home copies take part on that side;
   * {@code only}: the range a pair's larger lo must fall in (MIN_VALUE: any).
   */
  private void probe(Unit l, Unit r, boolean homeL, boolean homeR, long only, Out out) {
    pairs(l, l.fresh[0], true, homeL, r.held[1], homeR, only, out);
    pairs(l, l.fresh[0], true, homeL, r.fresh[1], homeR, only, out);
    pairs(l, l.held[0], false, homeL, r.fresh[1], homeR, only, out);
  }

  private void pairs(Unit lu, Held l, boolean lFresh, boolean homeL, Held r, boolean homeR,
      long only, Out out) {
    boolean[] hit = lFresh ? lu.hitFresh : lu.hitHeld;
    HullSweep.sweep(l, homeL, r, homeR, (i, j) -> {
      if (only != Long.MIN_VALUE && rules.rangeOf(Math.max(l.lo[i], r.lo[j])) != only) return;
      if (!exact().holds(l.cond[i].view, r.cond[j].view)) return;
      if (rules.semiOrAnti()) {
        if (!hit[i] && rules.how.equals("semi")) out.emit(l.rows[i], null);
        hit[i] = true;
        return;
      }
      out.emit(l.rows[i], r.rows[j]);
      l.matched[i] = true;
      r.matched[j] = true;
    });
  }

  private Exact exact() {
    if (exact == null) {
      TaskContext t = TaskContext.get();
      exact = new Exact(rules, t == null ? 0 : t.partitionId());
    }
    return exact;
  }

  // -- prune -----------------------------------------------------------------------------------

  /** Releases what can match nothing more; returns the rows each side still holds. */
  private long[] prune(Map<String, Unit> units, Map<String, long[]> progress, Out out) {
    long[] held = new long[2];
    Iterator<Unit> it = units.values().iterator();
    while (it.hasNext()) {
      Unit u = it.next();
      long[] p = progress.get(u.key);
      for (int s = 0; s < 2; s++) {
        Held h = u.held[s];
        if (p != null && p[1 - s] != NONE) {
          int k = h.below(rules.bound(s, p[1 - s]));
          out.pruned[s] += k;
          if (rules.keeps(s)) {
            for (int i = 0; i < k; i++) if (!h.matched[i] && h.home[i]) out.lone(s, h.rows[i]);
          }
          h.dropFirst(k);
        }
        held[s] += h.n;
      }
      if (u.held[0].n == 0 && u.held[1].n == 0) it.remove();
    }
    return held;
  }

  // -- contract --------------------------------------------------------------------------------

  private static String quoted(String key) {
    return key == null ? "None" : "'" + key.replace("\\", "\\\\").replace("'", "\\'") + "'";
  }

  private RuntimeException late(int s, String key, long ord, long newest) {
    long floor = newest - rules.disorder[s];
    String o = rules.order[s];
    return UserErrors.raised("giql-spark: a late row on stream " + quoted(rules.alias[s]) + ", key "
        + quoted(key) + ": " + o + " = " + ord + " is below the bound " + floor + " (newest " + o
        + " " + newest + " - max_disorder " + rules.disorder[s] + "). Rows must arrive in "
        + "non-decreasing " + o + " within each key; register the stream with max_disorder=N to "
        + "allow N of disorder, or late_rows='drop' to drop and count such rows");
  }

  private RuntimeException broken(int s, String key, int code, long ord) {
    String what = code == REVERSED
        ? "its interval has start > end (at " + rules.order[s] + " = " + ord + ")"
        : "it has a NULL key or a NULL in " + rules.needed[s] + ", yet its condition could still "
            + "hold, so it has no place in the order";
    return UserErrors.raised("giql-spark: a row of stream " + quoted(rules.alias[s]) + " on key "
        + quoted(key) + " breaks the order contract: " + what + "; fix the input, or register "
        + "the stream with late_rows='drop' to drop and count such rows");
  }

  // -- state -----------------------------------------------------------------------------------

  /** The state's layout; a state of another layout is refused rather than misread. */
  private static final int LAYOUT = 0x47530002;

  private void decode(byte[] bytes, Map<String, long[]> progress, Map<String, Unit> units) {
    ByteBuffer in = ByteBuffer.wrap(bytes);
    int layout = in.getInt();
    if (layout != LAYOUT) {
      throw UserErrors.raised("giql-spark: this query's checkpoint holds stream-join state of another "
          + "layout (written by another giql-spark version); start the query from a new checkpoint");
    }
    int buckets = in.getInt();
    long width = in.getLong();
    if (buckets != rules.buckets) {
      throw UserErrors.raised("giql-spark: this query's state was written with " + buckets
          + " state buckets and it now runs with " + rules.buckets + "; restart it with "
          + "spark.giql.streaming.stateBuckets=" + buckets);
    }
    if (width != rules.width) {
      throw UserErrors.raised("giql-spark: this query's state was written with position ranges of "
          + width + " and it now runs with " + rules.width + "; restart it with "
          + "spark.giql.streaming.rangeWidth=" + width);
    }
    for (int i = in.getInt(); i > 0; i--) {
      String key = string(in);
      progress.put(key, new long[] {in.getLong(), in.getLong()});
    }
    for (int i = in.getInt(); i > 0; i--) {
      String key = string(in);
      Unit unit = unit(units, key, in.getLong());
      for (int side = 0; side < 2; side++) {
        for (int j = in.getInt(); j > 0; j--) {
          long prune = in.getLong(), lo = in.getLong(), hi = in.getLong();
          byte flags = in.get();
          byte[] row = bytes(in), cond = bytes(in);
          unit.held[side].add(prune, lo, hi, (flags & 1) != 0, (flags & 2) != 0, row,
              cond == null ? null : rules.condRow(side, cond));
        }
      }
    }
  }

  /**
   * The state as bytes of giql-spark's own layout. A typed state (arrays of structs) would make
   * Spark generate and compile its decoder anew in every batch (the encoder's loop variables
   * get fresh names), which on a small machine costs more than the batch's join.
   */
  private byte[] encode(Map<String, long[]> progress, Map<String, Unit> units) {
    int size = 32;
    for (String k : progress.keySet()) size += 24 + k.length() * 4;
    for (Unit u : units.values()) {
      size += 24 + (u.key == null ? 0 : u.key.length() * 4);
      for (Held h : u.held) {
        for (int i = 0; i < h.n; i++) {
          size += 33 + (h.rows[i] == null ? 0 : h.rows[i].length)
              + (h.cond[i] == null ? 0 : h.cond[i].row.getSizeInBytes());
        }
      }
    }
    ByteBuffer out = ByteBuffer.allocate(size);
    out.putInt(LAYOUT).putInt(rules.buckets).putLong(rules.width).putInt(progress.size());
    for (Map.Entry<String, long[]> e : progress.entrySet()) {
      string(out, e.getKey());
      out.putLong(e.getValue()[0]).putLong(e.getValue()[1]);
    }
    out.putInt(units.size());
    for (Unit u : units.values()) {
      string(out, u.key);
      out.putLong(u.range);
      for (Held h : u.held) {
        out.putInt(h.n);
        for (int i = 0; i < h.n; i++) {
          out.putLong(h.prune[i]).putLong(h.lo[i]).putLong(h.hi[i]);
          out.put((byte) ((h.matched[i] ? 1 : 0) | (h.home[i] ? 2 : 0)));
          bytes(out, h.rows[i]);
          bytes(out, h.cond[i] == null ? null : h.cond[i].row.getBytes());
        }
      }
    }
    return Arrays.copyOf(out.array(), out.position());
  }

  private static void bytes(ByteBuffer out, byte[] b) {
    if (b == null) {
      out.putInt(-1);
    } else {
      out.putInt(b.length).put(b);
    }
  }

  private static byte[] bytes(ByteBuffer in) {
    int n = in.getInt();
    if (n < 0) return null;
    byte[] b = new byte[n];
    in.get(b);
    return b;
  }

  private static void string(ByteBuffer out, String s) {
    bytes(out, s == null ? null : s.getBytes(StandardCharsets.UTF_8));
  }

  private static String string(ByteBuffer in) {
    byte[] b = bytes(in);
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
  }
}
