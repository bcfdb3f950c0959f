package io.giql.spark.join.merge;

import org.apache.spark.sql.catalyst.expressions.Expression;

/**
 * The check that a side's files come sorted inside their row groups, which the footers cannot
 * tell: the first rows of a few files read with the side's own reader, cached per file, with
 * the widths of the rows read (they weigh pairs in the task cut).
 */
final class SortedSample {
  private SortedSample() {}

  static final int FILES = 4;
  static final int ROWS = 4096;
  private static final java.util.Map<String, String> SAMPLED =
      new java.util.concurrent.ConcurrentHashMap<>();
  /** The sample's sum of hi - lo and its rows with bounds, as {@link #SAMPLED}. */
  private static final java.util.Map<String, double[]> WIDTHS =
      new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * Reads the first rows of the first row group of a few files with the side's reader, filter
   * and projection and checks that they come sorted by (key, lo) (the footers cannot tell the
   * order inside a row group). The operator checks every row again when it runs.
   */
  static boolean check(MergeIntervalJoinExec.Side s, Side layout,
      Expression key, Expression lo, Expression hi, long slack, int rows, String name,
      String[] why) {
    if (rows <= 0) return true;
    double[] width = new double[2];
    SideSpec spec = null;
    int files = 0;
    for (ParquetLayout f : layout.files) {
      if (files >= FILES) break;
      ParquetLayout.RowGroup first = null;
      for (ParquetLayout.RowGroup g : f.groups) {
        if (g.rows > 0 && g.keys != null && g.keys.length > 0) {
          first = g;
          break;
        }
      }
      if (first == null) continue;
      files++;
      String id = f.path + "|" + f.size + "|" + f.modificationTime + "|" + first.start + "|"
          + MergePlanner.reading(s, key, lo, hi) + "|" + slack + "|" + rows;
      String seen = SAMPLED.get(id);
      double[] w = WIDTHS.get(id);
      if (seen == null || w == null) {
        w = new double[2];
        if (spec == null) spec = MergeIntervalJoinExec.spec(s, name, key, lo, hi);
        FileStream st = new FileStream(spec,
            new org.apache.spark.sql.execution.datasources.PartitionedFile[] {
                Units.file(f, first.start, first.length)},
            Units.ranks(first.keys), false, false, true, slack);
        seen = "";
        try {
          // reading is the check; the widths weigh pairs in the task cut (Work)
          SweepRow row;
          for (int i = 0; i < rows && (row = st.next()) != null; i++) {
            if (row.nullBound) continue;
            w[0] += (double) row.hi - row.lo;
            w[1]++;
          }
        } catch (Disorder d) {
          seen = d.detail;
        } catch (RuntimeException e) {
          seen = "could not read a sample: " + e;
        } finally {
          st.close();
        }
        if (SAMPLED.size() > 10_000) {
          SAMPLED.clear();
          WIDTHS.clear();
        }
        SAMPLED.put(id, seen);
        WIDTHS.put(id, w);
      }
      width[0] += w[0];
      width[1] += w[1];
      if (!seen.isEmpty()) {
        why[0] = "the first rows are not sorted by (key, lo): " + seen;
        return false;
      }
    }
    if (width[1] > 0) layout.width = width[0] / width[1];
    return true;
  }
}
