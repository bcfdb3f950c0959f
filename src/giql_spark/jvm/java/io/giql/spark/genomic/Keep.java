package io.giql.spark.genomic;

import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import org.apache.spark.sql.sources.And;
import org.apache.spark.sql.sources.EqualNullSafe;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;

/**
 * The region a query's filters confine a read to: a set of chromosomes (null: any) and bounds on
 * start and end, taken from the filters Spark pushes ({@code chrom = 'chr7'}, {@code chrom IN
 * (...)}, {@code start < x}, {@code end >= y} and their conjunctions). A record outside it is
 * dropped as soon as its chromosome and start are read, before its other fields are parsed; with
 * an index only the index's chunks that can hold such records are read. Spark applies every
 * filter again afterwards, so this only ever drops rows the query drops.
 */
final class Keep implements Serializable {
  private static final long serialVersionUID = 1L;

  Set<String> chroms;           // null: any
  long startMin = Long.MIN_VALUE;
  long startMax = Long.MAX_VALUE;
  long endMin = Long.MIN_VALUE;
  long endMax = Long.MAX_VALUE;
  private transient byte[][] chromBytes;
  final List<Filter> used = new ArrayList<>();

  static Keep of(Filter[] filters) {
    Keep k = new Keep();
    for (Filter f : filters) {
      if (k.take(f)) k.used.add(f);
    }
    return k;
  }

  boolean any() {
    return chroms == null && startMin == Long.MIN_VALUE && startMax == Long.MAX_VALUE && endMin == Long.MIN_VALUE
        && endMax == Long.MAX_VALUE;
  }

  private boolean take(Filter f) {
    if (f instanceof And) {
      boolean a = take(((And) f).left());
      boolean b = take(((And) f).right());
      return a || b;
    }
    if (f instanceof EqualTo && ((EqualTo) f).attribute().equals("chrom") && ((EqualTo) f).value() != null) {
      chroms(Set.of(String.valueOf(((EqualTo) f).value())));
      return true;
    }
    if (f instanceof EqualNullSafe && ((EqualNullSafe) f).attribute().equals("chrom")
        && ((EqualNullSafe) f).value() != null) {
      chroms(Set.of(String.valueOf(((EqualNullSafe) f).value())));
      return true;
    }
    if (f instanceof In && ((In) f).attribute().equals("chrom")) {
      Set<String> s = new TreeSet<>();
      for (Object v : ((In) f).values()) if (v != null) s.add(String.valueOf(v));
      chroms(s);
      return true;
    }
    String attr = null;
    Object value = null;
    int kind = 0;  // 1: <, 2: <=, 3: >, 4: >=
    if (f instanceof LessThan) { attr = ((LessThan) f).attribute(); value = ((LessThan) f).value(); kind = 1; }
    else if (f instanceof LessThanOrEqual) { attr = ((LessThanOrEqual) f).attribute(); value = ((LessThanOrEqual) f).value(); kind = 2; }
    else if (f instanceof GreaterThan) { attr = ((GreaterThan) f).attribute(); value = ((GreaterThan) f).value(); kind = 3; }
    else if (f instanceof GreaterThanOrEqual) { attr = ((GreaterThanOrEqual) f).attribute(); value = ((GreaterThanOrEqual) f).value(); kind = 4; }
    if (attr == null || !(value instanceof Number) || !(attr.equals("start") || attr.equals("end"))) return false;
    double d = ((Number) value).doubleValue();
    if (Double.isNaN(d)) return false;
    long max = kind == 1 ? (long) Math.ceil(d) - 1 : (long) Math.floor(d);   // x < d, x <= d
    long min = kind == 3 ? (long) Math.floor(d) + 1 : (long) Math.ceil(d);   // x > d, x >= d
    if (attr.equals("start")) {
      if (kind <= 2) startMax = Math.min(startMax, max); else startMin = Math.max(startMin, min);
    } else {
      if (kind <= 2) endMax = Math.min(endMax, max); else endMin = Math.max(endMin, min);
    }
    return true;
  }

  private void chroms(Set<String> s) {
    if (chroms == null) {
      chroms = new TreeSet<>(s);
    } else {
      chroms.retainAll(s);
    }
  }

  /** Whether a record on {@code b[from, to)} starting at {@code start} may be kept. */
  boolean keeps(byte[] b, int from, int to, long start) {
    if (start < startMin || start > Math.min(startMax, endMax)) return false;
    if (chroms == null) return true;
    if (chromBytes == null) {
      chromBytes = new byte[chroms.size()][];
      int i = 0;
      for (String c : chroms) chromBytes[i++] = c.getBytes(StandardCharsets.UTF_8);
    }
    for (byte[] c : chromBytes) {
      if (c.length == to - from && java.util.Arrays.equals(c, 0, c.length, b, from, to)) return true;
    }
    return false;
  }

  boolean keepsChrom(String chrom) {
    return chroms == null || chroms.contains(chrom);
  }

  /** The smallest position a record to keep can reach (end >= start, so start's bound counts too). */
  long lowest() {
    return Math.max(endMin, startMin);
  }

  /** The largest start a record to keep can have. */
  long highest() {
    return Math.min(startMax, endMax);
  }

  @Override
  public String toString() {
    StringBuilder s = new StringBuilder();
    s.append(chroms == null ? "any chromosome" : String.join(",", chroms));
    if (lowest() != Long.MIN_VALUE || highest() != Long.MAX_VALUE) {
      s.append(':').append(lowest() == Long.MIN_VALUE ? "" : String.valueOf(lowest())).append('-')
          .append(highest() == Long.MAX_VALUE ? "" : String.valueOf(highest()));
    }
    return s.toString();
  }
}
