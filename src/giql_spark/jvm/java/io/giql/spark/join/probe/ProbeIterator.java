package io.giql.spark.join.probe;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;

import io.giql.spark.columns.FastResidual;
import io.giql.spark.columns.Residual;
import io.giql.spark.columns.RowConcat;
import io.giql.spark.compat.PartitionFn;
import io.giql.spark.compat.Scala;
import io.giql.spark.index.IntervalIndex;
import io.giql.spark.index.Nearest;
import io.giql.spark.index.PerRow;

import scala.collection.Iterator;

import io.giql.spark.exec.JoinIterator;

/** Probes one partition of the streamed side. */
public final class ProbeIterator extends JoinIterator {
  private final Probe p;
  private final Iterator<InternalRow> stream;
  private IntervalIndex idx;
  public Reach reach;        // a k-nearest probe of the right rows within reach, or null
  private final UnsafeProjection keyProj;
  private final UnsafeProjection boundsProj;
  private final Residual residual;
  private final UnsafeProjection resultProj;
  private final RowConcat concat;  // a pair's row as its two rows' bytes (null: resultProj)
  private final UnsafeProjection streamToUnsafe;
  private final JoinedRow joined = new JoinedRow();
  private final JoinedRow counted = new JoinedRow();
  private final PerRow.Acc acc;   // COUNT mode only
  private final PerRow.Sums sums; // the current stream row's sums (COUNT mode with sums)
  private long matches;
  private long curLo;             // the stream row's closed hull
  private long curHi;
  private final UnsafeRow buildRow;
  private final InternalRow nullBuild;
  private final IntervalIndex.IntBuffer cand = new IntervalIndex.IntBuffer();
  private final Nearest.Scratch nearScratch = new Nearest.Scratch();
  private EntryResidual values; // null: the residual is asked of the rows
  final long[] matchedBuild; // MARK mode only
  private InternalRow cur;
  private boolean curMatched;
  private int candPos;
  private GroupLookup groups;
  private int hint = -1;

  public ProbeIterator(Probe p, int partition, Iterator<InternalRow> stream) {
    this(p, p.bc.value(), partition, stream);
  }

  /** Probes {@code idx}, an index not broadcast (one unit of a merge's right side). */
  public ProbeIterator(Probe p, IntervalIndex idx, int partition, Iterator<InternalRow> stream) {
    super(p.numOut, p.numCand);
    this.p = p;
    this.stream = stream;
    this.idx = idx;
    this.groups = new GroupLookup(idx);
    this.keyProj = UnsafeProjection.create(p.streamKeys);
    this.boundsProj = UnsafeProjection.create(Scala.seqOf(p.streamLo, p.streamHi));
    this.residual = Residual.of(p.residual, p.residualInput, p.leftOut, p.rightOut, partition);
    this.resultProj = p.resultProjection();
    this.concat = p.mode == ProbeMode.PAIRS || p.mode == ProbeMode.PAIRS_OR_PAD
        ? RowConcat.of(p.output, p.joinedInput, p.buildRight ? p.streamFields : p.buildFields)
        : null;
    this.streamToUnsafe = p.mode == ProbeMode.SEMI || p.mode == ProbeMode.ANTI
        ? UnsafeProjection.create(p.streamTypes)
        : null;
    this.values = EntryResidual.of(residual, idx, p.buildRight);
    this.accept = p.nearest != null && p.nearest.filtered && residual != null ? this::holds : null;
    this.buildRow = new UnsafeRow(p.buildFields);
    this.nullBuild = new GenericInternalRow(p.buildFields);
    this.matchedBuild = p.mode == ProbeMode.MARK ? new long[(idx.numRows() + 63) >>> 6] : null;
    if (p.mode == ProbeMode.COUNT) {
      // a padded row's sums read NULL right columns
      List<Attribute> in = new ArrayList<>(Scala.list(p.leftOut));
      for (Attribute a : Scala.list(p.rightOut)) in.add(a.withNullability(true));
      this.acc = p.perRow.acc(Scala.seq(in));
      this.sums = acc.fresh();
    } else {
      this.acc = null;
      this.sums = null;
    }
  }

  private void pair(InternalRow s, InternalRow b) {
    if (p.buildRight) joined.apply(s, b);
    else joined.apply(b, s);
  }

  private InternalRow asUnsafe(InternalRow r) {
    return r instanceof UnsafeRow ? r : streamToUnsafe.apply(r);
  }

  /** {@link #holds}, asked by a filtered k-nearest join's search of each entry it finds (null: not one). */
  private final Nearest.Accept accept;

  /**
   * Whether the residual holds for the current stream row and entry {@code entry}: on values where
   * the fast residual decides, else on the pair's rows (then left paired).
   */
  private boolean holds(int entry) {
    int v = values == null ? FastResidual.UNKNOWN : values.eval(entry);
    if (v != FastResidual.UNKNOWN || residual == null) return v != FastResidual.FALSE;
    idx.pointTo(buildRow, idx.rowOf[entry]);
    pair(cur, buildRow);
    return p.buildRight ? residual.holds(cur, buildRow, joined)
        : residual.holds(buildRow, cur, joined);
  }

  /** Loads the candidates of the current stream row. */
  private void candidates() {
    cand.clear();
    candPos = 0;
    UnsafeRow key = keyProj.apply(cur);
    if (key.anyNull()) return;
    UnsafeRow b = boundsProj.apply(cur);
    if (b.anyNull()) return;
    long x = b.getLong(0);
    long y = b.getLong(1);
    curLo = Math.min(x, y);
    curHi = Math.max(x, y);
    int g = groups.group(key);
    if (groups.changed) hint = -1;
    if (g >= 0) probe(g);
    if (reach != null && (g < 0 || !reach.certain(p.nearest, idx, curLo, curHi, cand))) {
      // this row's nearest may lie among the right rows not read (or its key has no row that
      // can match among those read): read them all, once, and probe them from here on
      idx = reach.all.get();
      reach = null;
      groups = new GroupLookup(idx);
      values = EntryResidual.of(residual, idx, p.buildRight);
      hint = -1;
      cand.clear();
      g = groups.group(key);
      if (g >= 0) probe(g);
    }
    candRows += cand.n;
  }

  /** The candidates of the current row (its hull [curLo, curHi]) in group {@code g}. */
  private void probe(int g) {
    if (values != null) values.stream(cur);
    if (p.nearest != null) {
      p.nearest.find(idx, g, curLo, curHi, nearScratch, cand, accept);
    } else {
      hint = idx.query(g, curLo, curHi, hint, cand);
    }
  }

  @Override
  protected boolean advance() {
    while (true) {
      if (cur != null) {
        while (candPos < cand.n) {
          int entry = cand.a[candPos++];
          // a filtered search's entries have met the residual already
          if (accept == null && !holds(entry)) continue;
          int r = idx.rowOf[entry];
          idx.pointTo(buildRow, r);
          pair(cur, buildRow);
          curMatched = true;
          switch (p.mode) {
            case PAIRS:
            case PAIRS_OR_PAD:
              out = concat == null ? null
                  : p.buildRight ? concat.apply(cur, buildRow, joined) : concat.apply(buildRow, cur, joined);
              if (out == null) out = resultProj.apply(joined);
              return true;
            case SEMI:
              out = asUnsafe(cur);
              cur = null;
              return true;
            case ANTI:
              candPos = cand.n;
              break;
            case MARK:
              matchedBuild[r >>> 6] |= 1L << r;
              break;
            case COUNT:
              matches++;
              // build right: joined is (left, right)
              if (sums != null) acc.add(sums, joined, curLo, curHi, idx.lo(entry), idx.hi(entry));
              break;
            default:
              throw new IllegalStateException();
          }
        }
        InternalRow s = cur;
        cur = null;
        if (p.mode == ProbeMode.COUNT) {
          long v = p.perRow.value(matches, p.keepsUnmatched);
          if (v >= 0) {
            if (matches == 0 && sums != null) {
              pair(s, nullBuild);
              acc.add(sums, joined, curLo, curHi, 1, 0); // the padded join row
            }
            out = resultProj.apply(counted.apply(s, acc.row(v, sums)));
            return true;
          }
          continue;
        }
        if (!curMatched) {
          if (p.mode == ProbeMode.PAIRS_OR_PAD) {
            pair(s, nullBuild);
            out = resultProj.apply(joined);
            return true;
          }
          if (p.mode == ProbeMode.ANTI) {
            out = asUnsafe(s);
            return true;
          }
        }
      }
      if (!stream.hasNext()) {
        flush();
        return false;
      }
      cur = stream.next();
      curMatched = false;
      matches = 0;
      if (sums != null) sums.clear();
      candidates();
    }
  }

  /** The probe of each partition of the streamed rows. */
  public static PartitionFn<InternalRow, InternalRow> fn(Probe p) {
    return (partition, it) -> new ProbeIterator(p, partition, it);
  }

  /** Probes every row and hands back the bitmap of the build rows some row matched. */
  public static PartitionFn<InternalRow, long[]> marks(Probe p) {
    return (partition, it) -> {
      ProbeIterator pi = new ProbeIterator(p, partition, it);
      while (pi.hasNext()) pi.next();
      return Scala.iterator(java.util.List.of(pi.matchedBuild).iterator());
    };
  }
}
