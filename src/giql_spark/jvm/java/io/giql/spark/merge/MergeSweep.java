package io.giql.spark.merge;

import java.io.Closeable;
import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Map;

import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Ascending$;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.BasePredicate;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.InterpretedOrdering;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.catalyst.expressions.NullsFirst$;
import org.apache.spark.sql.catalyst.expressions.Predicate;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.execution.UnsafeExternalRowSorter;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.types.BooleanType$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.IntegerType$;
import org.apache.spark.sql.types.LongType$;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;
import org.apache.spark.util.collection.unsafe.sort.PrefixComparators;

import io.giql.spark.columns.FastResidual;
import io.giql.spark.columns.KeyColumn;
import io.giql.spark.columns.LongColumn;
import io.giql.spark.columns.ScanFilter;
import io.giql.spark.compat.Scala;
import io.giql.spark.index.PerRow;

import scala.Function1;
import scala.collection.AbstractIterator;
import scala.collection.Iterator;
import scala.collection.immutable.Seq;

/**
 * The execution side of {@link MergeIntervalJoinExec}: per task, for each unit of its
 * {@link MergePlan}, both sides' row groups are read with Spark's own Parquet reader and the two
 * streams, sorted by (key, lo), are swept with one active list per side.
 *
 * <p>The order is checked on every row. When a side goes back (a key out of its run, or a lo
 * smaller than the one before it within a key), the unit fails over: both sides of the unit are
 * read again, numbered, sorted with Spark's external sorter, and swept once more, skipping what
 * the first pass already produced. The first pass produced, exactly, the pairs among the rows it
 * had processed (both sides were in order up to there), so those are skipped; a left row it
 * already reported as unmatched (outer or anti) that now finds a match means a row was reported
 * wrongly, and the task fails with an error that says so instead of returning a wrong answer.
 */
public final class MergeSweep {
  private MergeSweep() {}

  public enum Kind { INNER, LEFT, SEMI, ANTI }

  static final boolean TRACE = Boolean.getBoolean("giql.merge.trace");

  /** Thrown by a side's stream when its order breaks. */
  static final class Disorder extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final String detail;

    Disorder(String detail) {
      super(detail, null, false, false);
      this.detail = detail;
    }
  }

  /** How one side is read and turned into (key, lo, hi, row). All expressions are bound. */
  public static final class SideSpec implements Serializable {
    private static final long serialVersionUID = 1L;
    final String name;
    final Function1<PartitionedFile, Iterator<InternalRow>> reader;
    final Expression filter;       // over the scan row, or null
    final Seq<Expression> project; // scan row -> side row
    final Expression key;          // over the side row
    final Expression lo;
    final Expression hi;
    final boolean stringKey;
    final DataType[] sideTypes;

    public SideSpec(String name, Function1<PartitionedFile, Iterator<InternalRow>> reader,
        Expression filter, Seq<Expression> project, Expression key, Expression lo, Expression hi,
        DataType[] sideTypes) {
      this.name = name;
      this.reader = reader;
      this.filter = filter;
      this.project = project;
      this.key = key;
      this.lo = lo;
      this.hi = hi;
      this.stringKey = key.dataType() instanceof StringType;
      this.sideTypes = sideTypes;
    }
  }

  /** A row of one side in the sweep. */
  static final class Ent {
    final int rank;
    final long lo;
    final long hi;
    final long ord;
    final UnsafeRow row;          // null in a lean stream
    final boolean nullBound;
    final long[] vals;            // a lean stream's residual columns, else null
    final long nulls;             // bit k: vals[k] is NULL
    boolean matched;
    long n;                       // matches so far, in a per-row count
    long[] sums;                  // a per-row count's running sums (PerRow.Acc), or null

    Ent(int rank, long lo, long hi, long ord, UnsafeRow row, boolean nullBound) {
      this(rank, lo, hi, ord, row, nullBound, null, 0);
    }

    Ent(int rank, long lo, long hi, long ord, UnsafeRow row, boolean nullBound, long[] vals,
        long nulls) {
      this.rank = rank;
      this.lo = lo;
      this.hi = hi;
      this.ord = ord;
      this.row = row;
      this.nullBound = nullBound;
      this.vals = vals;
      this.nulls = nulls;
    }
  }

  interface Stream {
    /** The next row, or null at the end; throws {@link Disorder}. */
    Ent next();
  }

  /**
   * One side of one unit read from its files: rows passing the side's filter whose key is one of
   * the unit's keys (or NULL, for the NULL-key unit), numbered in reading order.
   */
  static final class FileStream implements Stream {
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
        this.cols = null;
        this.lean = null;
        this.leanInt = null;
        this.keyCol = null;
        this.leanNoKey = null;
      }
      this.spec = spec;
      this.files = files;
      this.ranks = ranks;
      this.nullKeys = nullKeys;
      this.keepNullBounds = keepNullBounds;
      this.check = check;
      this.filter = ScanFilter.of(spec.filter);
      this.project = UnsafeProjection.create(spec.project);
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
    public Ent next() {
      if (!check) return read();
      while (true) {
        Ent h = pending.peek();
        if (h != null && (end || h.rank < curRank || h.lo <= bound())) return pending.poll();
        if (end) return null;
        Ent e = read();
        if (e == null) {
          end = true;
          continue;
        }
        if (e.nullBound) return e; // matches nothing: its place in the order does not matter
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
        if (slack == 0 && pending.isEmpty()) return e;
        pending.add(e);
      }
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

    /** {@code e} (over the side row) over the scan row: each side column by its projection. */
    static Expression overScan(Expression e, Seq<Expression> project) {
      return e.transformUp(new scala.runtime.AbstractPartialFunction<Expression, Expression>() {
        @Override
        public boolean isDefinedAt(Expression x) {
          return x instanceof BoundReference;
        }

        @Override
        public Expression apply(Expression x) {
          return project.apply(((BoundReference) x).ordinal());
        }
      });
    }

    private Ent readLean() {
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
            Ent e = columnar(rank, row);
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
          Object key = spec.stringKey ? p.getUTF8String(0) : (Object) keyValue(p);
          if (lastKey != null && lastKey.equals(key)) {
            rank = lastRank;
          } else {
            Integer r = ranks.get(key);
            if (r == null) continue; // another unit's key (a shared row group)
            rank = r;
            lastKey = spec.stringKey ? ((UTF8String) key).clone() : key;
            lastRank = rank;
          }
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
          return new Ent(rank, 0, 0, ord++, null, true, vals, nulls);
        }
        long x = p.getLong(o + 1);
        long y = p.getLong(o + 2);
        return new Ent(rank, Math.min(x, y), Math.max(x, y), ord++, null, false, vals, nulls);
      }
    }

    /** {@link #readLean}'s row {@code row} of the batch off its vectors; null: skip it. */
    private Ent columnar(int rank, int row) {
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
        return new Ent(rank, 0, 0, ord++, null, true, vals, nulls);
      }
      long x = lo.get(row);
      long y = hi.get(row);
      return new Ent(rank, Math.min(x, y), Math.max(x, y), ord++, null, false, vals, nulls);
    }

    /** The next row of the unit in reading order, numbered; null at the end. */
    private Ent read() {
      if (lean != null) return readLean();
      while (true) {
        InternalRow scan = nextScanRow();
        if (scan == null) return null;
        rowsRead++;
        if (filter != null && !filter.eval(scan, batchRow - 1)) continue;
        UnsafeRow side = project.apply(scan);
        UnsafeRow k = keyProj.apply(side);
        int rank;
        if (k.isNullAt(0)) {
          if (!nullKeys) continue;
          return full(-1, 0, 0, side, true);
        } else {
          if (nullKeys) continue;
          Object key = spec.stringKey ? k.getUTF8String(0) : (Object) keyValue(k);
          if (lastKey != null && lastKey.equals(key)) {
            rank = lastRank;
          } else {
            Integer r = ranks.get(key);
            if (r == null) continue; // another unit's key (a shared row group)
            rank = r;
            lastKey = spec.stringKey ? ((UTF8String) key).clone() : key;
            lastRank = rank;
          }
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

    /**
     * Also gives each full row the values of the residual's columns of its side (as a lean row
     * has), so the residual can be checked against a lean row of the other side.
     */
    FileStream withResidualValues(int[] cols, boolean[] ints) {
      this.valCols = cols;
      this.valInt = ints;
      return this;
    }

    private Ent full(int rank, long lo, long hi, UnsafeRow side, boolean nullBound) {
      if (valCols == null) return new Ent(rank, lo, hi, ord++, side.copy(), nullBound);
      int n = valCols.length;
      long[] vals = n == 0 ? null : new long[n];
      long nulls = 0;
      for (int k = 0; k < n; k++) {
        if (side.isNullAt(valCols[k])) nulls |= 1L << k;
        else vals[k] = valInt[k] ? side.getInt(valCols[k]) : side.getLong(valCols[k]);
      }
      return new Ent(rank, lo, hi, ord++, side.copy(), nullBound, vals, nulls);
    }

    private long keyValue(UnsafeRow k) {
      DataType t = spec.key.dataType();
      if (t == LongType$.MODULE$) return k.getLong(0);
      if (t == IntegerType$.MODULE$) return k.getInt(0);
      if (t == org.apache.spark.sql.types.ShortType$.MODULE$) return k.getShort(0);
      return k.getByte(0);
    }
  }

  /** A side of a unit read again in full and sorted by (rank, lo, ord). */
  static final class SortedStream implements Stream {
    private final Iterator<InternalRow> sorted;
    private final UnsafeExternalRowSorter sorter;
    private final int fields;

    SortedStream(FileStream source, SideSpec spec) throws IOException {
      // [rank, lo, hi, ord, nullBound, side row as a struct]
      StructType sideType = new StructType();
      for (int i = 0; i < spec.sideTypes.length; i++) {
        sideType = sideType.add(new StructField("c" + i, spec.sideTypes[i], true,
            Metadata.empty()));
      }
      StructType schema = new StructType(new StructField[] {
          new StructField("rank", IntegerType$.MODULE$, false, Metadata.empty()),
          new StructField("lo", LongType$.MODULE$, false, Metadata.empty()),
          new StructField("hi", LongType$.MODULE$, false, Metadata.empty()),
          new StructField("ord", LongType$.MODULE$, false, Metadata.empty()),
          new StructField("nb", BooleanType$.MODULE$, false, Metadata.empty()),
          new StructField("row", sideType, false, Metadata.empty())});
      java.util.List<SortOrder> order = new java.util.ArrayList<>();
      order.add(new SortOrder(new BoundReference(0, IntegerType$.MODULE$, false),
          Ascending$.MODULE$, NullsFirst$.MODULE$, Scala.seqOf()));
      order.add(new SortOrder(new BoundReference(1, LongType$.MODULE$, false),
          Ascending$.MODULE$, NullsFirst$.MODULE$, Scala.seqOf()));
      order.add(new SortOrder(new BoundReference(3, LongType$.MODULE$, false),
          Ascending$.MODULE$, NullsFirst$.MODULE$, Scala.seqOf()));
      sorter = UnsafeExternalRowSorter.create(schema, new InterpretedOrdering(Scala.seq(order)),
          PrefixComparators.LONG, new UnsafeExternalRowSorter.PrefixComputer() {
            private final Prefix p = new Prefix();

            @Override
            public Prefix computePrefix(InternalRow row) {
              p.value = row.getInt(0);
              p.isNull = false;
              return p;
            }
          }, SparkEnv.get().memoryManager().pageSizeBytes(), false);
      UnsafeProjection pack = UnsafeProjection.create(new DataType[] {IntegerType$.MODULE$,
          LongType$.MODULE$, LongType$.MODULE$, LongType$.MODULE$, BooleanType$.MODULE$,
          sideType});
      this.fields = spec.sideTypes.length;
      GenericInternalRow g = new GenericInternalRow(6);
      Ent e;
      while ((e = source.next()) != null) {
        g.setInt(0, e.rank);
        g.setLong(1, e.lo);
        g.setLong(2, e.hi);
        g.setLong(3, e.ord);
        g.setBoolean(4, e.nullBound);
        g.update(5, e.row);
        sorter.insertRow(pack.apply(g));
      }
      sorted = sorter.sort();
      TaskContext tc = TaskContext.get();
      if (tc != null) {
        tc.addTaskCompletionListener(new org.apache.spark.util.TaskCompletionListener() {
          @Override
          public void onTaskCompletion(TaskContext context) {
            sorter.cleanupResources();
          }
        });
      }
    }

    @Override
    public Ent next() {
      if (!sorted.hasNext()) return null;
      InternalRow r = sorted.next();
      UnsafeRow row = (UnsafeRow) r.getStruct(5, fields);
      return new Ent(r.getInt(0), r.getLong(1), r.getLong(2), r.getLong(3), row.copy(),
          r.getBoolean(4));
    }
  }

  /** A growable bit set over left ordinals. */
  static final class Bits {
    long[] w = new long[16];

    void set(long i) {
      int k = (int) (i >>> 6);
      if (k >= w.length) w = java.util.Arrays.copyOf(w, Math.max(k + 1, w.length * 2));
      w[k] |= 1L << i;
    }

    boolean get(long i) {
      int k = (int) (i >>> 6);
      return k < w.length && (w[k] & (1L << i)) != 0;
    }
  }

  /** Everything one task needs, shipped in its closure. */
  public static final class Job implements Serializable {
    private static final long serialVersionUID = 1L;
    final Kind kind;
    final boolean count;
    final SideSpec left;
    final SideSpec right;
    final Expression residual;          // over left side ++ right side, or null
    final Seq<Attribute> leftAttrs;
    final Seq<Attribute> rightAttrs;
    final Seq<Expression> output;       // over leftAttrs ++ rightAttrs (nullable), pairs/pads
    final Seq<Attribute> joinedAttrs;
    final MergePlan plan;
    final SQLMetric numOut;
    final SQLMetric numCand;
    final SQLMetric numFailover;
    final SQLMetric rowsRead;
    final long slack;
    final PerRow perRow;                // one row per left row with its count, or null

    public Job withPerRow(PerRow p) {
      Job j = new Job(kind, count, left, right, residual, leftAttrs, rightAttrs, output,
          joinedAttrs, plan, numOut, numCand, numFailover, rowsRead, slack, p);
      return j;
    }

    public Job(Kind kind, boolean count, SideSpec left, SideSpec right, Expression residual,
        Seq<Attribute> leftAttrs, Seq<Attribute> rightAttrs, Seq<Expression> output,
        Seq<Attribute> joinedAttrs, MergePlan plan, SQLMetric numOut, SQLMetric numCand,
        SQLMetric numFailover, SQLMetric rowsRead, long slack) {
      this(kind, count, left, right, residual, leftAttrs, rightAttrs, output, joinedAttrs, plan,
          numOut, numCand, numFailover, rowsRead, slack, null);
    }

    public Job(Kind kind, boolean count, SideSpec left, SideSpec right, Expression residual,
        Seq<Attribute> leftAttrs, Seq<Attribute> rightAttrs, Seq<Expression> output,
        Seq<Attribute> joinedAttrs, MergePlan plan, SQLMetric numOut, SQLMetric numCand,
        SQLMetric numFailover, SQLMetric rowsRead, long slack, PerRow perRow) {
      this.perRow = perRow;
      this.slack = slack;
      this.kind = kind;
      this.count = count;
      this.left = left;
      this.right = right;
      this.residual = residual;
      this.leftAttrs = leftAttrs;
      this.rightAttrs = rightAttrs;
      this.output = output;
      this.joinedAttrs = joinedAttrs;
      this.plan = plan;
      this.numOut = numOut;
      this.numCand = numCand;
      this.numFailover = numFailover;
      this.rowsRead = rowsRead;
    }
  }

  /** The rows (or the one count row) of one task: its units one after the other. */
  static final class TaskIterator extends AbstractIterator<InternalRow> {
    private final Job job;
    private final MergePlan.Unit[] units;
    private final BasePredicate pred;
    private final FastResidual fast;
    private final UnsafeProjection result;
    private final UnsafeProjection leftOnly;
    private final InternalRow nullRight;
    private final JoinedRow joined = new JoinedRow();
    private final PerRow.Acc acc;
    private int u = -1;
    private Sweep sweep;
    private FileStream curL;
    private FileStream curR;
    private long count;
    private boolean countEmitted;
    private boolean flushed;
    private long outRows;
    private long candRows;
    private long failovers;
    private InternalRow out;

    TaskIterator(Job job, int task) {
      this.job = job;
      this.units = job.plan.tasks[task];
      if (job.residual != null) {
        this.pred = Predicate.create(job.residual, job.joinedAttrs);
        this.pred.initialize(task);
        this.fast = FastResidual.compile(job.residual, job.leftAttrs, job.rightAttrs);
      } else {
        this.pred = null;
        this.fast = null;
      }
      this.acc = job.perRow == null ? null : job.perRow.acc(job.joinedAttrs);
      if (job.perRow != null) {
        this.result = UnsafeProjection.create(job.output,
            Scala.concat(job.leftAttrs, Scala.seq(job.perRow.outputs())));
      } else {
        this.result = job.count || job.output == null ? null
            : UnsafeProjection.create(job.output, job.joinedAttrs);
      }
      this.leftOnly = UnsafeProjection.create(job.left.sideTypes);
      this.nullRight = new GenericInternalRow(job.right.sideTypes.length);
    }

    boolean residual(Ent l, Ent r) {
      if (pred == null) return true;
      if (l.row == null || r.row == null) {
        // lean streams exist only with an exact fast residual
        return fast.evalValues(l.vals, l.nulls, r.vals, r.nulls) == FastResidual.TRUE;
      }
      return residual(l.row, r.row);
    }

    boolean residual(UnsafeRow l, UnsafeRow r) {
      if (pred == null) return true;
      if (fast != null) {
        int v = fast.eval(l, r);
        if (v != FastResidual.UNKNOWN) return v == FastResidual.TRUE;
      }
      return pred.eval(joined.apply(l, r));
    }

    InternalRow pairRow(UnsafeRow l, UnsafeRow r) {
      return result.apply(joined.apply(l, r));
    }

    InternalRow padRow(UnsafeRow l) {
      return result.apply(joined.apply(l, nullRight));
    }

    /** Adds a join row (a pair, or {@code l} padded when {@code r} is null) to {@code l}'s sums. */
    void sum(Ent l, UnsafeRow r) {
      if (l.sums == null) l.sums = acc.fresh();
      if (l.sums != null) acc.add(l.sums, joined.apply(l.row, r == null ? nullRight : r));
    }

    /** A per-row count's row: the left row's projection, its count and its sums. */
    InternalRow countedRow(Ent l, long n) {
      return result.apply(joined.apply(l.row, acc.row(n, l.sums)));
    }

    private boolean nextUnit() {
      if (sweep != null) finishUnit();
      while (++u < units.length) {
        MergePlan.Unit unit = units[u];
        Map<Object, Integer> ranks = MergePlan.ranks(unit.keys);
        boolean keepNull = job.kind == Kind.LEFT || job.kind == Kind.ANTI;
        boolean exact = pred == null || fast != null && fast.exact();
        boolean lean = job.count && job.perRow == null && exact;
        // a per-row count with no sums reports left rows; of the right it needs only bounds
        boolean leanRight = lean || job.perRow != null && job.perRow.sums.isEmpty() && exact;
        curL = new FileStream(job.left, unit.left, ranks, unit.nullKeys, keepNull, true,
            job.slack, lean ? leanCols(0) : null, lean ? leanInt(0) : null);
        if (leanRight && !lean) curL.withResidualValues(leanCols(0), leanInt(0));
        curR = new FileStream(job.right, unit.nullKeys ? new PartitionedFile[0] : unit.right,
            ranks, false, false, true, job.slack, leanRight ? leanCols(1) : null,
            leanRight ? leanInt(1) : null);
        sweep = new Sweep(this, curL, curR, null);
        return true;
      }
      return false;
    }

    private int[] leanCols(int side) {
      return fast == null ? new int[0] : fast.columns(side);
    }

    private boolean[] leanInt(int side) {
      return fast == null ? new boolean[0] : fast.columnsAreInt(side);
    }

    private void finishUnit() {
      if (curL != null) job.rowsRead.add(curL.rowsRead + curR.rowsRead);
      curL = null;
      curR = null;
      sweep = null;
    }

    /** The first pass over the unit broke: sweep it again from sorted copies. */
    private void failover(Disorder d) {
      failovers++;
      MergePlan.Unit unit = units[u];
      Map<Object, Integer> ranks = MergePlan.ranks(unit.keys);
      boolean keepNull = job.kind == Kind.LEFT || job.kind == Kind.ANTI;
      Sweep first = sweep;
      job.rowsRead.add(curL.rowsRead + curR.rowsRead);
      try {
        FileStream l = new FileStream(job.left, unit.left, ranks, unit.nullKeys, keepNull, false,
            0);
        FileStream r = new FileStream(job.right, unit.nullKeys ? new PartitionedFile[0]
            : unit.right, ranks, false, false, false, 0);
        Stream sl = new SortedStream(l, job.left);
        Stream sr = new SortedStream(r, job.right);
        job.rowsRead.add(l.rowsRead + r.rowsRead);
        curL = null;
        curR = null;
        sweep = new Sweep(this, sl, sr, new Sweep.Prefix(first.processedL, first.processedR,
            first.done, first.doneUnmatched, d.detail));
      } catch (IOException e) {
        throw new RuntimeException(e);
      }
    }

    private boolean advance() {
      while (true) {
        if (sweep == null && !nextUnit()) {
          if (!flushed) flush();
          if (job.count && !countEmitted) {
            countEmitted = true;
            GenericInternalRow g = new GenericInternalRow(1);
            g.setLong(0, count);
            out = UnsafeProjection.create(new DataType[] {LongType$.MODULE$}).apply(g);
            return true;
          }
          return false;
        }
        try {
          if (sweep.advance()) return true;
        } catch (Disorder d) {
          failover(d);
          continue;
        }
        finishUnit();
      }
    }

    void emit(InternalRow r) {
      out = r;
      outRows++;
    }

    void counted() {
      count++;
      outRows++;
    }

    private void flush() {
      flushed = true;
      job.numOut.add(job.count ? 1 : outRows);
      job.numCand.add(candRows);
      job.numFailover.add(failovers);
      outRows = 0;
      candRows = 0;
      failovers = 0;
    }

    @Override
    public boolean hasNext() {
      return out != null || advance();
    }

    @Override
    public InternalRow next() {
      if (out == null && !advance()) throw new java.util.NoSuchElementException();
      InternalRow r = out;
      out = null;
      return r;
    }

    /** The sweep of one unit. {@link #advance} leaves one output row in the task's out. */
    static final class Sweep {
      /** What a first pass already produced, for the pass over sorted copies. */
      static final class Prefix {
        final Bits nL;  // the rows the first pass processed, by ordinal
        final Bits nR;
        final Bits done;
        final Bits doneUnmatched;
        final String why;

        Prefix(Bits nL, Bits nR, Bits done, Bits doneUnmatched, String why) {
          this.nL = nL;
          this.nR = nR;
          this.done = done;
          this.doneUnmatched = doneUnmatched;
          this.why = why;
        }
      }

      private final TaskIterator t;
      private final Stream ls;
      private final Stream rs;
      private final Prefix prefix;
      private final Kind kind;
      private final boolean count;
      private final PerRow perRow;
      private final ArrayList<Ent> actL = new ArrayList<>();
      private final ArrayList<Ent> actR = new ArrayList<>();
      private final ArrayList<Ent> retired = new ArrayList<>();
      private int retiredPos;
      private Ent lHead;
      private Ent rHead;
      private boolean lEnd;
      private boolean rEnd;
      private int group = Integer.MIN_VALUE;
      private Ent x;
      private boolean xLeft;
      private ArrayList<Ent> others;
      private int bi;
      private boolean finished;
      final Bits processedL;
      final Bits processedR;
      // left rows already reported final (semi, anti, padded) and those reported unmatched
      final Bits done;
      final Bits doneUnmatched;

      Sweep(TaskIterator t, Stream ls, Stream rs, Prefix prefix) {
        this.t = t;
        this.ls = ls;
        this.rs = rs;
        this.prefix = prefix;
        this.kind = t.job.kind;
        this.count = t.job.count;
        this.perRow = t.job.perRow;
        boolean track = prefix == null && (kind != Kind.INNER || perRow != null);
        this.processedL = prefix == null ? new Bits() : null;
        this.processedR = prefix == null ? new Bits() : null;
        this.done = track ? new Bits() : null;
        this.doneUnmatched = track ? new Bits() : null;
      }

      private boolean existence() {
        return kind == Kind.SEMI || kind == Kind.ANTI;
      }


      /** Reports a left-only row (semi, anti, padded); false if nothing is reported. */
      private boolean reportLeft(Ent l, boolean unmatched) {
        if (prefix != null && prefix.done != null && prefix.done.get(l.ord)) return false;
        if (done != null) {
          done.set(l.ord);
          if (unmatched) doneUnmatched.set(l.ord);
        }
        if (count) {
          t.counted();
          return false;
        }
        if (kind == Kind.LEFT) {
          t.emit(t.padRow(l.row));
        } else {
          t.emit(l.row);
        }
        return true;
      }

      /** A hull-overlapping pair: residual, then the join type's action. True if it emitted. */
      private boolean pair(Ent l, Ent r) {
        t.candRows++;
        if (!t.residual(l, r)) return false;
        boolean old = prefix != null && prefix.nL.get(l.ord) && prefix.nR.get(r.ord);
        if (!old && prefix != null && prefix.doneUnmatched != null
            && prefix.doneUnmatched.get(l.ord)) {
          throw Scala.userError(unsortedMessage(prefix.why));
        }
        boolean first = !l.matched;
        l.matched = true;
        if (perRow != null) {
          // counted now, reported when the row retires; a row the first pass already reported
          // has all its pairs among the first pass's rows, so a new pair means its count was wrong
          if (prefix != null && prefix.done != null && prefix.done.get(l.ord)) {
            if (!old) throw Scala.userError(unsortedMessage(prefix.why));
            return false;
          }
          l.n++;
          t.sum(l, r.row);
          return false;
        }
        switch (kind) {
          case INNER:
          case LEFT:
            if (old) return false;
            if (count) {
              t.counted();
              return false;
            }
            t.emit(t.pairRow(l.row, r.row));
            return true;
          case SEMI:
            return first && reportLeft(l, false);
          default:
            return false;
        }
      }

      private String unsortedMessage(String why) {
        return "giql merge interval join: a left row already returned has a match after all, "
            + "because an input is not sorted by (key, start) (" + why + "); the result would "
            + "be wrong. Sort the input files by (key, start), or turn the merge off (Spark conf "
            + "spark.giql.merge.enabled=false, or a giql-spark strategy such as jvm_broadcast).";
      }

      /** A left row leaves the sweep: no later right row can match it. */
      private boolean retire(Ent l) {
        if (perRow != null) {
          if (prefix != null && prefix.done != null && prefix.done.get(l.ord)) return false;
          if (done != null) done.set(l.ord);
          long v = perRow.value(l.n, kind == Kind.LEFT);
          if (v < 0) return false;
          if (l.n == 0) t.sum(l, null); // the padded join row
          t.emit(t.countedRow(l, v));
          return true;
        }
        if (kind == Kind.LEFT || kind == Kind.ANTI) {
          if (!l.matched) return reportLeft(l, true);
        }
        return false;
      }

      private Ent pullL() {
        if (lHead == null && !lEnd) {
          lHead = ls.next();
          if (lHead == null) lEnd = true;
        }
        return lHead;
      }

      private Ent pullR() {
        if (rHead == null && !rEnd) {
          rHead = rs.next();
          if (rHead == null) rEnd = true;
        }
        return rHead;
      }

      private void purgeRight(long lo) {
        int n = actR.size();
        int i = 0;
        while (i < n) {
          if (actR.get(i).hi < lo) {
            actR.set(i, actR.get(n - 1));
            actR.remove(--n);
          } else {
            i++;
          }
        }
      }

      private void purgeLeft(long lo) {
        int n = actL.size();
        int i = 0;
        while (i < n) {
          Ent e = actL.get(i);
          if (e.hi < lo || existence() && e.matched) {
            if (e.hi < lo) retired.add(e);
            actL.set(i, actL.get(n - 1));
            actL.remove(--n);
          } else {
            i++;
          }
        }
      }

      private void retireAllLeft() {
        retired.addAll(actL);
        actL.clear();
        actR.clear();
      }

      /** Takes the next row off the heads and prepares its work; false at the end. */
      private boolean step() {
        retired.clear();
        retiredPos = 0;
        Ent l = pullL();
        Ent r = pullR();
        if (l == null && r == null) {
          if (finished) return false;
          finished = true;
          retireAllLeft();
          return true;
        }
        // a left row that can match nothing goes first: its key and lo must not order the merge
        boolean takeLeft = r == null || l != null && (l.nullBound || l.rank < r.rank
            || l.rank == r.rank && l.lo <= r.lo);
        final Ent e = takeLeft ? l : r;
        if (TRACE) {
          System.err.println("step " + (takeLeft ? "L" : "R") + " rank=" + e.rank + " lo=" + e.lo
              + " hi=" + e.hi + " ord=" + e.ord + " nb=" + e.nullBound + " actL=" + actL.size()
              + " actR=" + actR.size());
        }
        if (takeLeft) {
          lHead = null;
          if (processedL != null) processedL.set(e.ord);
        } else {
          rHead = null;
          if (processedR != null) processedR.set(e.ord);
        }
        if (e.nullBound) {
          // a left row that can match nothing (the right side keeps none)
          retired.add(e);
          return true;
        }
        if (e.rank != group) {
          retireAllLeft();
          group = e.rank;
        }
        x = e;
        xLeft = takeLeft;
        if (takeLeft) {
          purgeRight(e.lo);
          others = actR;
        } else {
          purgeLeft(e.lo);
          others = actL;
        }
        bi = 0;
        return true;
      }

      boolean advance() {
        while (true) {
          while (retiredPos < retired.size()) {
            if (retire(retired.get(retiredPos++))) return true;
          }
          if (x != null) {
            if (count && (kind == Kind.INNER || kind == Kind.LEFT) && prefix == null
                && !xLeft) {
              // the hot loop of a count: no row is built
              for (int n = others.size(); bi < n; bi++) {
                Ent l = others.get(bi);
                t.candRows++;
                if (t.residual(l, x)) {
                  l.matched = true;
                  t.counted();
                }
              }
            } else if (count && kind == Kind.INNER && prefix == null) {
              for (int n = others.size(); bi < n; bi++) {
                t.candRows++;
                if (t.residual(x, others.get(bi))) t.counted();
              }
              x.matched = true;
            }
            while (bi < others.size()) {
              Ent o = others.get(bi++);
              boolean emitted = xLeft ? pair(x, o) : pair(o, x);
              if (xLeft && existence() && x.matched) bi = others.size();
              if (emitted) return true;
            }
            Ent e = x;
            x = null;
            if (xLeft) {
              if (!(existence() && e.matched)) actL.add(e);
            } else {
              actR.add(e);
            }
          }
          if (!step()) return false;
        }
      }
    }
  }

  /** The per-task function. */
  public static final class TaskFn
      extends scala.runtime.AbstractFunction2<Object, Iterator<Object>, Iterator<InternalRow>>
      implements Serializable {
    private static final long serialVersionUID = 1L;
    private final Job job;

    public TaskFn(Job job) {
      this.job = job;
    }

    @Override
    public Iterator<InternalRow> apply(Object partition, Iterator<Object> ignored) {
      return new TaskIterator(job, (Integer) partition);
    }
  }
}
