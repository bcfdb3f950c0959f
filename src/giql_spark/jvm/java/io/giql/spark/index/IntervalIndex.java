package io.giql.spark.index;

import java.io.Serializable;
import java.util.Arrays;
import java.util.HashMap;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.execution.joins.HashedRelation;
import org.apache.spark.unsafe.Platform;

import io.giql.spark.compat.Scala;
import io.giql.spark.compat.UserErrors;

import scala.collection.Iterator;

/**
 * The broadcast side of an interval join: rows grouped by equality key, each group an interval
 * index over primitive arrays, and the rows themselves as UnsafeRow bytes in a few large pages.
 *
 * <p>Per key the intervals are sorted by lo. A group is searched one of two ways, chosen when the
 * index is built: {@code SCAN} walks the sorted starts from {@code qlo - maxWidth} up to
 * {@code qhi} (best when widths are uniform and small), {@code TREE} uses the implicit augmented
 * interval tree of the cgranges layout: the sorted array read as an in-order binary tree in which
 * node i sits at level (number of trailing one bits of i) and {@code aux[i]} holds the largest hi
 * of its subtree (best when a few intervals are very wide).
 *
 * <p>It implements Spark's (internal) HashedRelation interface only because
 * BroadcastExchangeExec accepts no other relation type than that or an array of rows; the
 * hash-join methods are not used and throw.
 */
public final class IntervalIndex implements HashedRelation, Serializable {
  private static final long serialVersionUID = 1L;

  /** What the last build in this JVM did and how long sorting and indexing took (profiling). */
  public static volatile String lastBuildReport = "";

  @SuppressWarnings("unchecked")
  static <E extends Throwable> E sneaky(Throwable t) throws E {
    throw (E) t;
  }

  static final byte SCAN = 0;
  static final byte TREE = 1;
  private static final int PAGE = 1 << 24;

  // per group (key)
  final HashMap<UnsafeRow, Integer> groupOf;
  final int[] groupStart;   // [groupStart[g], groupStart[g+1]) are the group's entries
  final byte[] groupMode;
  final long[] groupMaxWidth;
  final int[] groupLevel;   // the root level of the implicit tree
  // per entry, sorted by lo within a group
  final long[] lo;
  final long[] hi;
  final long[] aux;         // TREE: max hi of the subtree; unused (empty) when no group is a tree
  public final int[] rowOf;        // entry -> row number
  // all build rows (also those with a NULL key or bound, for outer joins on the build side)
  final byte[][] pages;
  final long[] rowAddr;     // page << 32 | offset
  final int[] rowLen;
  final int numFields;
  final long bytes;

  IntervalIndex(HashMap<UnsafeRow, Integer> groupOf, int[] groupStart, byte[] groupMode,
      long[] groupMaxWidth, int[] groupLevel, long[] lo, long[] hi, long[] aux, int[] rowOf,
      byte[][] pages, long[] rowAddr, int[] rowLen, int numFields, long bytes) {
    this.groupOf = groupOf;
    this.groupStart = groupStart;
    this.groupMode = groupMode;
    this.groupMaxWidth = groupMaxWidth;
    this.groupLevel = groupLevel;
    this.lo = lo;
    this.hi = hi;
    this.aux = aux;
    this.rowOf = rowOf;
    this.pages = pages;
    this.rowAddr = rowAddr;
    this.rowLen = rowLen;
    this.numFields = numFields;
    this.bytes = bytes;
  }

  public int numRows() {
    return rowLen.length;
  }

  public int numGroups() {
    return groupMode.length;
  }

  /** The group of a key row (an UnsafeRow without NULLs), or -1. */
  public int group(UnsafeRow key) {
    Integer g = groupOf.get(key);
    return g == null ? -1 : g;
  }

  private transient HashMap<String, long[][]> entryColumns;

  /**
   * Integer columns {@code ords} of the build rows as arrays by entry, and last an array of NULL
   * bits by entry (bit k: column k is NULL), or null where no value is NULL. Made once per JVM
   * for each set of columns and kept with the index: a residual that reads them (the half-open
   * test of an interval join) then reads the entries' values in their order, from arrays, instead
   * of each candidate's row from wherever the build rows lie.
   */
  public synchronized long[][] entryColumns(int[] ords, boolean[] isInt) {
    if (entryColumns == null) entryColumns = new HashMap<>();
    String key = Arrays.toString(ords) + Arrays.toString(isInt);
    long[][] out = entryColumns.get(key);
    if (out != null) return out;
    int n = rowOf.length;
    out = new long[ords.length + 1][];
    for (int k = 0; k < ords.length; k++) out[k] = new long[n];
    long[] nulls = null;
    UnsafeRow row = new UnsafeRow(numFields);
    for (int i = 0; i < n; i++) {
      pointTo(row, rowOf[i]);
      for (int k = 0; k < ords.length; k++) {
        if (row.isNullAt(ords[k])) {
          if (nulls == null) nulls = new long[n];
          nulls[i] |= 1L << k;
        } else {
          out[k][i] = isInt[k] ? row.getInt(ords[k]) : row.getLong(ords[k]);
        }
      }
    }
    out[ords.length] = nulls;
    entryColumns.put(key, out);
    return out;
  }

  /** Points {@code row} at build row {@code r}. */
  public void pointTo(UnsafeRow row, int r) {
    long a = rowAddr[r];
    row.pointTo(pages[(int) (a >>> 32)], Platform.BYTE_ARRAY_OFFSET + (int) a, rowLen[r]);
  }

  /** The closed hull's lower end of an entry. */
  public long lo(int entry) {
    return lo[entry];
  }

  /** The closed hull's upper end of an entry. */
  public long hi(int entry) {
    return hi[entry];
  }

  /**
   * Appends to {@code out} the entries of group {@code g} whose [lo, hi] meets [qlo, qhi]
   * (qlo <= qhi), in no particular order. {@code hint} is what the previous call on the same
   * group returned (or -1): a stream sorted by lo then finds its start by galloping forward from
   * there, in cache, instead of a binary search over the whole group. Returns the next hint.
   */
  public int query(int g, long qlo, long qhi, int hint, IntBuffer out) {
    int s = groupStart[g];
    int e = groupStart[g + 1];
    if (groupMode[g] == SCAN) {
      long from = qlo - groupMaxWidth[g];
      if (from > qlo) from = Long.MIN_VALUE; // underflow
      int i = hint < 0 ? lowerBound(lo, s, e, from) : lowerBoundFrom(lo, s, e, from, hint);
      int first = i;
      for (; i < e && lo[i] <= qhi; i++) {
        if (hi[i] >= qlo) out.add(i);
      }
      return first;
    }
    queryTree(s, e - s, groupLevel[g], qlo, qhi, out);
    return -1;
  }

  /** lowerBound(a, s, e, x), searched from {@code hint} (any index in [s, e]). */
  static int lowerBoundFrom(long[] a, int s, int e, long x, int hint) {
    if (hint < s || hint > e) return lowerBound(a, s, e, x);
    if (hint > s && a[hint - 1] >= x) return lowerBound(a, s, hint, x);
    int i = hint;
    int step = 1;
    while (i < e && a[i] < x) {
      int j = i + step;
      if (j >= e || a[j] >= x) return lowerBound(a, i + 1, Math.min(j, e), x);
      i = j;
      step <<= 1;
    }
    return i;
  }

  /** First index in [s, e) whose lo is >= x. */
  static int lowerBound(long[] a, int s, int e, long x) {
    int l = s;
    int h = e;
    while (l < h) {
      int m = (l + h) >>> 1;
      if (a[m] < x) l = m + 1;
      else h = m;
    }
    return l;
  }

  private void queryTree(int base, int n, int rootLevel, long qlo, long qhi, IntBuffer out) {
    // explicit stack of (level, node, visited-left flag), kept in the caller's scratch buffer
    int[] sk = out.sk;
    long[] sx = out.sx;
    boolean[] sw = out.sw;
    int t = 0;
    sk[t] = rootLevel;
    sx[t] = (1L << rootLevel) - 1;
    sw[t++] = false;
    while (t > 0) {
      --t;
      int k = sk[t];
      long x = sx[t];
      boolean w = sw[t];
      if (k <= 3) { // a small subtree: scan its leaves and nodes in order
        long i0 = x >> k << k;
        long i1 = i0 + (1L << (k + 1)) - 1;
        if (i1 > n) i1 = n;
        for (long i = i0; i < i1 && lo[base + (int) i] <= qhi; i++) {
          if (hi[base + (int) i] >= qlo) out.add(base + (int) i);
        }
      } else if (!w) { // first visit: come back to this node after its left subtree
        long y = x - (1L << (k - 1));
        sk[t] = k;
        sx[t] = x;
        sw[t++] = true;
        if (y >= n || aux[base + (int) y] >= qlo) {
          sk[t] = k - 1;
          sx[t] = y;
          sw[t++] = false;
        }
      } else if (x < n && lo[base + (int) x] <= qhi) { // the node itself, then its right subtree
        if (hi[base + (int) x] >= qlo) out.add(base + (int) x);
        sk[t] = k - 1;
        sx[t] = x + (1L << (k - 1));
        sw[t++] = false;
      }
    }
  }

  /**
   * Fills aux[base..base+n) with subtree maxima of hi and returns the root level. The layout
   * follows cgranges (Heng Li): leaves at even positions, node i at level = trailing ones of i;
   * a node past the end of the array takes the maximum of the last real subtree.
   */
  static int buildTree(long[] hi, long[] aux, int base, int n) {
    if (n == 0) return 0;
    long last = 0;
    long lastI = 0;
    for (int i = 0; i < n; i += 2) {
      lastI = i;
      last = aux[base + i] = hi[base + i];
    }
    int k;
    for (k = 1; (1L << k) <= n; ++k) {
      long x = 1L << (k - 1);
      long i0 = (x << 1) - 1;
      long step = x << 2;
      for (long i = i0; i < n; i += step) {
        long el = aux[base + (int) (i - x)];
        long er = i + x < n ? aux[base + (int) (i + x)] : last;
        long v = hi[base + (int) i];
        if (el > v) v = el;
        if (er > v) v = er;
        aux[base + (int) i] = v;
      }
      lastI = ((lastI >> k) & 1) != 0 ? lastI - x : lastI + x;
      if (lastI < n && aux[base + (int) lastI] > last) last = aux[base + (int) lastI];
    }
    return k - 1;
  }

  // ----------------------------------------------------------------------- HashedRelation

  @Override
  public long estimatedSize() {
    return bytes;
  }

  @Override
  public Iterator<InternalRow> get(InternalRow key) {
    throw new UnsupportedOperationException("IntervalIndex is not a hash relation");
  }

  @Override
  public InternalRow getValue(InternalRow key) {
    throw new UnsupportedOperationException("IntervalIndex is not a hash relation");
  }

  @Override
  public boolean keyIsUnique() {
    return false;
  }

  @Override
  public Iterator<InternalRow> keys() {
    throw new UnsupportedOperationException("IntervalIndex is not a hash relation");
  }

  @Override
  public HashedRelation asReadOnlyCopy() {
    return this;
  }

  @Override
  public void close() {}

  @Override
  public String toString() {
    return "IntervalIndex(rows=" + numRows() + ", keys=" + numGroups() + ", entries=" + lo.length
        + ", bytes=" + bytes + ")";
  }

  // ----------------------------------------------------------------------- building

  /** Accumulates build rows, then sorts and indexes them. */
  static final class Builder {
    private final int numFields;
    private final String indexChoice;
    private final HashMap<UnsafeRow, Integer> groupOf = new HashMap<>();
    private final java.util.ArrayList<byte[]> pages = new java.util.ArrayList<>();
    private byte[] page = new byte[0];
    private int pageUsed = 0;
    private long[] rowAddr = new long[1024];
    private int[] rowLen = new int[1024];
    private int rows = 0;
    // entries (rows with a non-NULL key and bounds)
    private int[] eGroup = new int[1024];
    private long[] eLo = new long[1024];
    private long[] eHi = new long[1024];
    private int[] eRow = new int[1024];
    private int entries = 0;
    private long pageBytes = 0;
    private long usedBytes = 0;
    private final long maxRowBytes;

    Builder(int numFields, String indexChoice, long maxRowBytes) {
      this.numFields = numFields;
      this.indexChoice = indexChoice;
      this.maxRowBytes = maxRowBytes;
    }

    /** Adds a build row; {@code key} is null when the row can match nothing. */
    void add(UnsafeRow row, UnsafeRow key, long a, long b) {
      int r = addRow(row);
      if (key == null) return;
      Integer g = groupOf.get(key);
      if (g == null) {
        g = groupOf.size();
        groupOf.put(key.copy(), g);
      }
      if (entries == eLo.length) {
        int cap = grow(entries);
        eGroup = Arrays.copyOf(eGroup, cap);
        eLo = Arrays.copyOf(eLo, cap);
        eHi = Arrays.copyOf(eHi, cap);
        eRow = Arrays.copyOf(eRow, cap);
      }
      eGroup[entries] = g;
      eLo[entries] = Math.min(a, b);
      eHi[entries] = Math.max(a, b);
      eRow[entries] = r;
      entries++;
    }

    private static int grow(int n) {
      long cap = Math.max(1024L, (long) n + (n >> 1));
      if (cap > Integer.MAX_VALUE - 16) {
        if (n >= Integer.MAX_VALUE - 16) {
          throw UserErrors.raised("giql broadcast interval join: more than 2^31 rows for one interval index; "
              + "use a partitioned strategy (jvm_sweep or binned)");
        }
        cap = Integer.MAX_VALUE - 16;
      }
      return (int) cap;
    }

    private int addRow(UnsafeRow row) {
      int len = row.getSizeInBytes();
      if (pageUsed + len > page.length) {
        page = null;
      }
      usedBytes += len;
      if (usedBytes > maxRowBytes) {
        String limit = maxRowBytes >= (1L << 20) ? (maxRowBytes >> 20) + " MiB"
            : maxRowBytes + " bytes";
        // a QueryExecutionException reaches Python as pyspark's QueryExecutionException
        throw IntervalIndex.<RuntimeException>sneaky(
            new org.apache.spark.sql.execution.QueryExecutionException(
                "giql interval join: the broadcast side has more than " + limit + " of rows ("
                + rows + " rows so far), more than this driver can index and broadcast; use the "
                + "sweep join (giql_band option algo=sweep, inner joins), build the other side "
                + "(build=left/right), or raise spark.giql.broadcastMaxRowBytes", null));
      }
      if (page == null) {
        page = new byte[Math.max(PAGE, len)];
        pages.add(page);
        pageBytes += page.length;
        pageUsed = 0;
      }
      Platform.copyMemory(row.getBaseObject(), row.getBaseOffset(), page,
          Platform.BYTE_ARRAY_OFFSET + pageUsed, len);
      if (rows == rowLen.length) {
        int cap = grow(rows);
        rowAddr = Arrays.copyOf(rowAddr, cap);
        rowLen = Arrays.copyOf(rowLen, cap);
      }
      rowAddr[rows] = ((long) (pages.size() - 1) << 32) | pageUsed;
      rowLen[rows] = len;
      pageUsed += (len + 7) & ~7;
      return rows++;
    }

    IntervalIndex build() {
      long t0 = System.nanoTime();
      int ng = groupOf.size();
      int[] start = new int[ng + 1];
      for (int i = 0; i < entries; i++) start[eGroup[i] + 1]++;
      for (int g = 0; g < ng; g++) start[g + 1] += start[g];
      // counting sort of the entries by group
      long[] lo = new long[entries];
      long[] hi = new long[entries];
      int[] rowOf = new int[entries];
      int[] fill = Arrays.copyOf(start, ng);
      for (int i = 0; i < entries; i++) {
        int p = fill[eGroup[i]]++;
        lo[p] = eLo[i];
        hi[p] = eHi[i];
        rowOf[p] = eRow[i];
      }
      eGroup = null;
      eLo = null;
      eHi = null;
      eRow = null;
      byte[] mode = new byte[ng];
      long[] maxW = new long[ng];
      int[] level = new int[ng];
      boolean anyTree = false;
      for (int g = 0; g < ng; g++) {
        int s = start[g];
        int e = start[g + 1];
        Sort.sortByFirst(lo, hi, rowOf, s, e);
        long mw = 0;
        double sumW = 0;
        for (int i = s; i < e; i++) {
          long w = hi[i] - lo[i];
          if (w < 0) w = Long.MAX_VALUE; // overflowed: the hull is wider than a long
          if (w > mw) mw = w;
          sumW += w;
        }
        maxW[g] = mw;
        double meanW = e > s ? sumW / (e - s) : 0;
        boolean tree;
        switch (indexChoice) {
          case "tree": tree = true; break;
          case "scan": tree = false; break;
          default: tree = mw > 4 * meanW + 1024;
        }
        mode[g] = tree ? TREE : SCAN;
        anyTree |= tree;
      }
      long[] aux = new long[anyTree ? entries : 0];
      for (int g = 0; g < ng; g++) {
        if (mode[g] == TREE) {
          level[g] = buildTree(hi, aux, start[g], start[g + 1] - start[g]);
        }
      }
      byte[][] pageArr = pages.toArray(new byte[0][]);
      long[] addr = Arrays.copyOf(rowAddr, rows);
      int[] len = Arrays.copyOf(rowLen, rows);
      long bytes = pageBytes + 12L * rows + 28L * entries + 8L * aux.length + 64L * ng;
      lastBuildReport = "rows=" + rows + " entries=" + entries + " keys=" + ng + " trees=" + anyTree
          + " index_ms=" + (System.nanoTime() - t0) / 1_000_000;
      return new IntervalIndex(groupOf, start, mode, maxW, level, lo, hi, aux, rowOf, pageArr,
          addr, len, numFields, bytes);
    }
  }

  /** A growable int array, reused per probe row. */
  public static final class IntBuffer {
    public int[] a = new int[16];
    public int n = 0;
    // the tree walk's stack; depth <= 2 * levels + 2 < 128
    final int[] sk = new int[128];
    final long[] sx = new long[128];
    final boolean[] sw = new boolean[128];

    void add(int v) {
      if (n == a.length) a = Arrays.copyOf(a, a.length * 2);
      a[n++] = v;
    }

    public void clear() {
      n = 0;
    }
  }
}
