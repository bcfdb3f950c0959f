package io.giql.spark.join.merge;

import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Map;

import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.IntegerType$;
import org.apache.spark.sql.types.LongType$;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;

import io.giql.spark.columns.Fields;
import io.giql.spark.columns.KeyColumn;
import io.giql.spark.columns.LongColumn;
import io.giql.spark.columns.ScanFilter;
import io.giql.spark.columns.VectorRow;
import io.giql.spark.compat.Scala;

import scala.collection.Iterator;
import scala.collection.immutable.Seq;

/**
 * One side of one unit read from its files: rows passing the side's filter whose key is one of
 * the unit's keys (or NULL, for the NULL-key unit), numbered in reading order.
 */
final class FileStream implements RowStream {
  private final SideSpec spec;
  private final PartitionedFile[] files;
  private final Map<Object, Integer> ranks;
  private final boolean nullKeys;
  private final boolean keepNullBounds;
  private final boolean check;
  private final ScanFilter filter;
  private final UnsafeProjection project;
  private final UnsafeProjection keyProj;
  private final UnsafeProjection bounds;
  // lean: [key, lo, hi, residual columns] straight from the scan row, no side row kept
  private final UnsafeProjection lean;
  private final boolean[] leanInt;
  // lean with the key read off the column vector: [lo, hi, residual columns]
  private final UnsafeProjection leanNoKey;
  private final KeyColumn keyCol;
  // with keyCol, the same read straight off the vectors when all are plain (else null)
  private final LongColumn[] cols;
  // with keyCol, a full side row written off the vectors (else null: the projection)
  private final VectorRow vrow;
  private boolean fromBatch;
  // a full row's residual columns (of its side row), for a residual against lean rows
  private int[] valCols;
  private boolean[] valInt;
  private int file = -1;
  private Iterator<Object> it;
  private ColumnarBatch batch;
  private int batchRow;
  private int batchRows;
  private Object lastKey;
  private int lastRank = -1;
  private int curRank = -1;
  private long maxLo = Long.MIN_VALUE;
  private final long slack;
  private final HeldRows pending = new HeldRows();
  private boolean end;
  private boolean shared;
  private long ord;
  long rowsRead;

  /**
   * {@code check}: rows must come sorted by (key, lo), except that a row's lo may be up to
   * {@code slack} below the largest lo before it within its key (rows are held back that long);
   * a row further back throws {@link Disorder}.
   */
  FileStream(SideSpec spec, PartitionedFile[] files, Map<Object, Integer> ranks,
      boolean nullKeys, boolean keepNullBounds, boolean check, long slack) {
    this(spec, files, ranks, nullKeys, keepNullBounds, check, slack, null, null);
  }

  /**
   * {@code leanCols}: a count needs of each row only its key, bounds and these columns of the
   * side row (those the residual reads; ints where {@code leanInt}), so no row is built.
   */
  FileStream(SideSpec spec, PartitionedFile[] files, Map<Object, Integer> ranks,
      boolean nullKeys, boolean keepNullBounds, boolean check, long slack, int[] leanCols,
      boolean[] leanInt) {
    this.slack = slack;
    if (leanCols != null) {
      java.util.List<Expression> es = new java.util.ArrayList<>();
      es.add(overScan(spec.key, spec.project));
      es.add(overScan(spec.lo, spec.project));
      es.add(overScan(spec.hi, spec.project));
      for (int c : leanCols) es.add(spec.project.apply(c));
      this.lean = UnsafeProjection.create(Scala.seq(es));
      this.leanInt = leanInt;
      this.keyCol = KeyColumn.of(es.get(0), ranks);
      this.leanNoKey = keyCol == null ? null
          : UnsafeProjection.create(Scala.seq(es.subList(1, es.size())));
      this.cols = keyCol == null ? null : LongColumn.of(es.subList(1, es.size()));
    } else {
      // a full row still takes its key and bounds off the vectors where it can: projecting
      // them from the side row built a row and copied the key string twice per row
      this.lean = null;
      this.leanInt = null;
      this.leanNoKey = null;
      this.keyCol = KeyColumn.of(overScan(spec.key, spec.project), ranks);
      this.cols = keyCol == null ? null : LongColumn.of(java.util.List.of(
          overScan(spec.lo, spec.project), overScan(spec.hi, spec.project)));
    }
    this.spec = spec;
    this.files = files;
    this.ranks = ranks;
    this.nullKeys = nullKeys;
    this.keepNullBounds = keepNullBounds;
    this.check = check;
    this.filter = ScanFilter.of(spec.filter);
    this.project = UnsafeProjection.create(spec.project);
    this.vrow = keyCol != null && lean == null ? VectorRow.of(spec.project) : null;
    this.keyProj = UnsafeProjection.create(Scala.seqOf(spec.key));
    this.bounds = UnsafeProjection.create(Scala.seqOf(spec.lo, spec.hi));
  }

  @SuppressWarnings("unchecked")
  private InternalRow nextScanRow() {
    while (true) {
      if (batch != null) {
        if (batchRow < batchRows) return batch.getRow(batchRow++);
        batch = null;
      }
      if (it != null && it.hasNext()) {
        Object o = it.next();
        if (o instanceof ColumnarBatch) {
          batch = (ColumnarBatch) o;
          batchRow = 0;
          batchRows = batch.numRows();
          fromBatch = true;
          if (keyCol != null) keyCol.batch(batch);
          if (cols != null) {
            for (LongColumn c : cols) c.batch(batch);
          }
          if (filter != null) filter.batch(batch);
          if (vrow != null) vrow.batch(batch);
          if (direct != null) direct.batch(batch);
          continue;
        }
        if (fromBatch && filter != null) filter.batch(null);
        fromBatch = false;
        return (InternalRow) o;
      }
      if (it instanceof Closeable) {
        try {
          ((Closeable) it).close();
        } catch (IOException e) {
          throw new RuntimeException(e);
        }
      }
      it = null;
      if (++file >= files.length) return null;
      it = (Iterator<Object>) (Iterator<?>) spec.reader.apply(files[file]);
      final Iterator<Object> opened = it;
      TaskContext tc = TaskContext.get();
      if (tc != null && opened instanceof Closeable) {
        tc.addTaskCompletionListener(new org.apache.spark.util.TaskCompletionListener() {
          @Override
          public void onTaskCompletion(TaskContext context) {
            try {
              ((Closeable) opened).close();
            } catch (IOException e) {
              // closing twice or after a failure: nothing left to free
            }
          }
        });
      }
    }
  }

  @Override
  public SweepRow next() {
    if (!check) return read();
    if (inReadingOrder) {
      SweepRow e = read();
      if (e != null && !e.nullBound) checkOrder(e);
      return e;
    }
    while (true) {
      SweepRow h = pending.peek();
      if (h != null && (end || h.rank < curRank || h.lo <= bound())) return pending.poll();
      if (end) return null;
      SweepRow e = read();
      if (e == null) {
        end = true;
        continue;
      }
      if (e.nullBound) return e; // matches nothing: its place in the order does not matter
      checkOrder(e);
      if (slack == 0 && pending.isEmpty()) return e;
      pending.add(e);
    }
  }

  /** Throws {@link Disorder} for a row further back than the slack allows; notes its lo. */
  private void checkOrder(SweepRow e) {
    if (e.rank != curRank) {
      if (e.rank < curRank) {
        throw new Disorder(spec.name + " side: key " + lastKey
            + " comes after another key's rows (" + where() + ")");
      }
      curRank = e.rank;
      maxLo = e.lo;
    } else if (e.lo < bound()) {
      throw new Disorder(spec.name + " side: lo " + e.lo + " follows " + maxLo
          + " within key " + lastKey + " (" + where() + ")");
    } else if (e.lo > maxLo) {
      maxLo = e.lo;
    }
  }

  /**
   * Rows come in reading order, none held back: within the slack a row may still come before
   * the one returned last (a reader that takes that, {@link CountSweep}). Each row is valid
   * until the next {@link #next}.
   */
  FileStream inReadingOrder() {
    this.inReadingOrder = true;
    this.shared = true;
    return this;
  }

  private boolean inReadingOrder;

  /**
   * Rows read off a batch carry no side row: the reader writes what it returns straight off the
   * vectors, with {@link #output} ({@code out}: over the scan row). A row read otherwise keeps
   * its side row.
   */
  FileStream withOutput(VectorRow out) {
    this.direct = out;
    return this;
  }

  private VectorRow direct;

  /** {@link #withOutput}'s row for the row returned last, with {@code slot}. */
  org.apache.spark.sql.catalyst.expressions.UnsafeRow output(long slot) {
    return direct.apply(batchRow - 1, slot);
  }

  /** Closes the file being read (after a partial read). */
  void close() {
    if (it instanceof Closeable) {
      try {
        ((Closeable) it).close();
      } catch (IOException e) {
        // nothing left to free
      }
    }
    it = null;
    batch = null;
  }

  private long bound() {
    return maxLo < Long.MIN_VALUE + slack ? Long.MIN_VALUE : maxLo - slack;
  }

  private String where() {
    return files.length == 0 ? "" : files[Math.max(0, Math.min(file, files.length - 1))]
        .filePath().toString();
  }

  /**
   * {@code e} (over the side row) over the scan row: each side column by its projection, with
   * no alias or field of a struct built in place left ({@link Fields#plain}).
   */
  static Expression overScan(Expression e, Seq<Expression> project) {
    return Fields.plain(e.transformUp(new scala.runtime.AbstractPartialFunction<Expression, Expression>() {
      @Override
      public boolean isDefinedAt(Expression x) {
        return x instanceof BoundReference;
      }

      @Override
      public Expression apply(Expression x) {
        return project.apply(((BoundReference) x).ordinal());
      }
    }));
  }

  private SweepRow readLean() {
    while (true) {
      InternalRow scan = nextScanRow();
      if (scan == null) return null;
      rowsRead++;
      if (filter != null && !filter.eval(scan, batchRow - 1)) continue;
      UnsafeRow p;
      int rank;
      int o;  // where lo is in p, less one
      if (keyCol != null && fromBatch) {
        int row = batchRow - 1;
        rank = keyCol.rank(row);
        if (rank == KeyColumn.NULL) {
          if (!nullKeys) continue;
        } else {
          if (nullKeys || rank == KeyColumn.ABSENT) continue;
          lastKey = keyCol.key;
          lastRank = rank;
        }
        if (cols != null) {
          SweepRow e = columnar(rank, row);
          if (e != null) return e;
          continue;
        }
        p = leanNoKey.apply(scan);
        o = -1;
      } else if ((p = lean.apply(scan)).isNullAt(0)) {
        o = 0;
        if (!nullKeys) continue;
        rank = -1;
      } else {
        o = 0;
        if (nullKeys) continue;
        rank = rankOf(p);
        if (rank == OTHER_UNIT) continue;
      }
      int n = leanInt.length;
      long[] vals = n == 0 ? null : new long[n];
      long nulls = 0;
      for (int k = 0; k < n; k++) {
        if (p.isNullAt(o + 3 + k)) nulls |= 1L << k;
        else vals[k] = leanInt[k] ? p.getInt(o + 3 + k) : p.getLong(o + 3 + k);
      }
      if (rank < 0 || p.isNullAt(o + 1) || p.isNullAt(o + 2)) {
        if (rank >= 0 && !keepNullBounds) continue;
        return new SweepRow(rank, 0, 0, ord++, null, true, vals, nulls);
      }
      long x = p.getLong(o + 1);
      long y = p.getLong(o + 2);
      return new SweepRow(rank, Math.min(x, y), Math.max(x, y), ord++, null, false, vals, nulls);
    }
  }

  /** {@link #readLean}'s row {@code row} of the batch off its vectors; null: skip it. */
  private SweepRow columnar(int rank, int row) {
    int n = cols.length - 2;
    long[] vals = n == 0 ? null : new long[n];
    long nulls = 0;
    for (int k = 0; k < n; k++) {
      LongColumn c = cols[2 + k];
      if (c.isNull(row)) nulls |= 1L << k;
      else vals[k] = c.get(row);
    }
    LongColumn lo = cols[0];
    LongColumn hi = cols[1];
    if (rank < 0 || lo.isNull(row) || hi.isNull(row)) {
      if (rank >= 0 && !keepNullBounds) return null;
      return new SweepRow(rank, 0, 0, ord++, null, true, vals, nulls);
    }
    long x = lo.get(row);
    long y = hi.get(row);
    return new SweepRow(rank, Math.min(x, y), Math.max(x, y), ord++, null, false, vals, nulls);
  }

  /**
   * Keeps only the rows of a unit that starts or ends inside a key ({@link Range}).
   */
  FileStream withRange(Range range) {
    this.range = range;
    return this;
  }

  private Range range;

  /** The next row of the unit (of its range) in reading order, numbered; null at the end. */
  private SweepRow read() {
    while (true) {
      SweepRow e = readAny();
      if (e == null || range == null || e.rank < 0) return e;
      if (range.keeps(e.rank, e.lo, e.nullBound, file)) return e;
    }
  }

  private SweepRow readAny() {
    if (lean != null) return readLean();
    while (true) {
      InternalRow scan = nextScanRow();
      if (scan == null) return null;
      rowsRead++;
      if (filter != null && !filter.eval(scan, batchRow - 1)) continue;
      if (keyCol != null && fromBatch) {
        SweepRow e = fullOffVectors(scan, batchRow - 1);
        if (e != null) return e;
        continue;
      }
      UnsafeRow side = project.apply(scan);
      UnsafeRow k = keyProj.apply(side);
      int rank;
      if (k.isNullAt(0)) {
        if (!nullKeys) continue;
        return full(-1, 0, 0, side, true);
      } else {
        if (nullKeys) continue;
        rank = rankOf(k);
        if (rank == OTHER_UNIT) continue;
      }
      UnsafeRow b = bounds.apply(side);
      if (b.isNullAt(0) || b.isNullAt(1)) {
        if (!keepNullBounds) continue;
        return full(rank, 0, 0, side, true);
      }
      long x = b.getLong(0);
      long y = b.getLong(1);
      return full(rank, Math.min(x, y), Math.max(x, y), side, false);
    }
  }

  /** {@link #read}'s full row {@code row} of the batch, key and bounds off its vectors; null: skip it. */
  private SweepRow fullOffVectors(InternalRow scan, int row) {
    int rank = keyCol.rank(row);
    if (rank == KeyColumn.NULL) {
      if (!nullKeys) return null;
      return full(-1, 0, 0, sideRow(scan, row), true);
    }
    if (nullKeys || rank == KeyColumn.ABSENT) return null;
    lastKey = keyCol.key;
    lastRank = rank;
    UnsafeRow side = sideRow(scan, row);
    long x;
    long y;
    if (cols != null) {
      if (cols[0].isNull(row) || cols[1].isNull(row)) {
        return keepNullBounds ? full(rank, 0, 0, side, true) : null;
      }
      x = cols[0].get(row);
      y = cols[1].get(row);
    } else {
      UnsafeRow b = bounds.apply(side);
      if (b.isNullAt(0) || b.isNullAt(1)) return keepNullBounds ? full(rank, 0, 0, side, true) : null;
      x = b.getLong(0);
      y = b.getLong(1);
    }
    return full(rank, Math.min(x, y), Math.max(x, y), side, false);
  }

  /**
   * Row {@code row} of the batch as a side row; null when the reader writes its own (and the
   * bounds come off the vectors too).
   */
  private UnsafeRow sideRow(InternalRow scan, int row) {
    if (direct != null && cols != null) return null;
    return vrow != null ? vrow.apply(row) : project.apply(scan);
  }

  /**
   * Also gives each full row the values of the residual's columns of its side (as a lean row
   * has), so the residual can be checked against a lean row of the other side.
   */
  FileStream withResidualValues(int[] cols, boolean[] ints) {
    this.valCols = cols;
    this.valInt = ints;
    return this;
  }

  /**
   * Rows are not copied: each is valid until the next {@link #next}, for a reader that is done
   * with a row before it asks for the next one (a copy per row was a fifth of a k-nearest
   * join's row building).
   */
  FileStream sharedRows() {
    this.shared = true;
    return this;
  }

  private SweepRow full(int rank, long lo, long hi, UnsafeRow side, boolean nullBound) {
    if (shared && valCols == null || side == null) {
      return new SweepRow(rank, lo, hi, ord++, side, nullBound);
    }
    if (valCols == null) return new SweepRow(rank, lo, hi, ord++, side.copy(), nullBound);
    int n = valCols.length;
    long[] vals = n == 0 ? null : new long[n];
    long nulls = 0;
    for (int k = 0; k < n; k++) {
      if (side.isNullAt(valCols[k])) nulls |= 1L << k;
      else vals[k] = valInt[k] ? side.getInt(valCols[k]) : side.getLong(valCols[k]);
    }
    return new SweepRow(rank, lo, hi, ord++, side.copy(), nullBound, vals, nulls);
  }

  /** Rank {@link #rankOf} gives a key of another unit (a row group two units share). */
  private static final int OTHER_UNIT = -2;

  /** The rank of the key in column 0 of {@code k} (not NULL), or {@link #OTHER_UNIT}. */
  private int rankOf(UnsafeRow k) {
    Object key = spec.stringKey ? k.getUTF8String(0) : (Object) keyValue(k);
    if (lastKey != null && lastKey.equals(key)) return lastRank;
    Integer r = ranks.get(key);
    if (r == null) return OTHER_UNIT;
    lastKey = spec.stringKey ? ((UTF8String) key).clone() : key;
    lastRank = r;
    return r;
  }

  private long keyValue(UnsafeRow k) {
    DataType t = spec.key.dataType();
    if (t == LongType$.MODULE$) return k.getLong(0);
    if (t == IntegerType$.MODULE$) return k.getInt(0);
    if (t == org.apache.spark.sql.types.ShortType$.MODULE$) return k.getShort(0);
    return k.getByte(0);
  }
}
