package io.giql.spark.plan;

import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The options string of a giql_band marker: {@code key=value} pairs separated by ';' or ','.
 *
 * <ul>
 *   <li>{@code algo}: {@code auto} (default), {@code merge}, {@code broadcast} (interval index,
 *       one side broadcast) or {@code sweep}. {@code auto} and {@code merge} take the merge join
 *       ({@link MergeIntervalJoinExec}: both sides Parquet files sorted by key and position, no
 *       shuffle) when the inputs allow it and {@code spark.giql.merge.enabled} is not false
 *       ({@code merge} ignores that setting); otherwise {@code auto} broadcasts unless the join is
 *       inner and the smaller side's estimated size is known and exceeds
 *       {@code spark.giql.broadcastMaxBytes} (default 2g), and {@code merge} does the same.
 *       {@code auto} is the fallback for direct calls of giql_band: from GIQL and the DataFrame
 *       API the planner ({@code giql_spark.planner.select}) has chosen, and names the algo.</li>
 *   <li>{@code build}: {@code auto} (default), {@code left} or {@code right}: which side the
 *       broadcast index is built from.</li>
 *   <li>{@code index}: {@code auto} (default), {@code tree} (implicit augmented interval tree)
 *       or {@code scan} (sorted starts plus the widest interval of the key).</li>
 *   <li>{@code algo=sweep}: both sides shuffled by (key, tile) and swept (inner joins);
 *       {@code tile}: the tile width of the sweep ({@code auto} = 1,000,000).</li>
 *   <li>{@code nearest}: {@code k} > 0 makes the join a k-nearest join: each left row joins the
 *       k right rows of its keys whose hulls are nearest to its hull (gap 0 when they share a
 *       point, else the distance between them), ordered by (gap, lo, hi), not the rows whose
 *       hulls meet; {@code maxgap}: only right rows within that gap ({@code none} = any);
 *       {@code ties=true}: also every right row whose (gap, lo, hi) equals the k-th's.
 *       Planned only as the broadcast join building the right side (inner or left outer):
 *       {@code BandJoinStrategy} refuses it otherwise, so the marker is never evaluated.
 *       {@code side}: one of {@code Nearest.SIDE_NAMES}. {@code prefilter}: {@code false}
 *       (default) filters the k nearest by the rest of the join's condition, as a WHERE over a
 *       LATERAL subquery would; {@code true}: the k nearest among the right rows that meet it
 *       (a self-join leaving each row's own out).</li>
 * </ul>
 */
final class BandParams implements Serializable {
  private static final long serialVersionUID = 1L;

  final String algo;
  final String build;
  final String index;
  final long tile; // sweep tile width; 0 = auto
  final int nearest; // k of a k-nearest join; 0 = an overlap join
  final long maxGap; // a k-nearest join's largest gap; -1 = none
  final boolean ties; // a k-nearest join also returns the rows tied with the k-th
  final String side; // a k-nearest join's side, one of Nearest.SIDE_NAMES
  // a k-nearest join's residual picks the right rows searched, rather than filter the k found
  final boolean prefilter;

  private BandParams(String algo, String build, String index, long tile, int nearest,
      long maxGap, boolean ties, String side, boolean prefilter) {
    this.prefilter = prefilter;
    this.ties = ties;
    this.side = side;
    this.algo = algo;
    this.build = build;
    this.index = index;
    this.tile = tile;
    this.nearest = nearest;
    this.maxGap = maxGap;
  }

  /** Parses {@code text}; throws IllegalArgumentException with a readable message. */
  static BandParams parse(String text) {
    Map<String, String> kv = new LinkedHashMap<>();
    kv.put("algo", "auto");
    kv.put("build", "auto");
    kv.put("index", "auto");
    kv.put("tile", "auto");
    kv.put("nearest", "none");
    kv.put("maxgap", "none");
    kv.put("ties", "false");
    kv.put("side", "both");
    kv.put("prefilter", "false");
    if (text != null) {
      for (String part : text.split("[;,]")) {
        String p = part.trim();
        if (p.isEmpty()) continue;
        int eq = p.indexOf('=');
        if (eq < 0) {
          throw new IllegalArgumentException("giql_band option '" + p + "' is not key=value");
        }
        String k = p.substring(0, eq).trim().toLowerCase(Locale.ROOT);
        String v = p.substring(eq + 1).trim().toLowerCase(Locale.ROOT);
        if (!kv.containsKey(k)) {
          throw new IllegalArgumentException(
              "giql_band has no option '" + k + "' (options: algo, build, index, tile, nearest,"
              + " maxgap, ties, side, prefilter)");
        }
        kv.put(k, v);
      }
    }
    check("algo", kv.get("algo"), "auto", "broadcast", "sweep", "merge");
    check("build", kv.get("build"), "auto", "left", "right");
    check("index", kv.get("index"), "auto", "tree", "scan");
    check("ties", kv.get("ties"), "false", "true");
    check("side", kv.get("side"), io.giql.spark.index.Nearest.SIDE_NAMES);
    check("prefilter", kv.get("prefilter"), "false", "true");
    long tile = "auto".equals(kv.get("tile")) ? 0 : number("tile", kv.get("tile"), 1, "auto");
    long k = "none".equals(kv.get("nearest")) ? 0 : number("nearest", kv.get("nearest"), 1, null);
    if (k > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("giql_band option nearest=" + k + " is too large");
    }
    long maxGap = "none".equals(kv.get("maxgap")) ? -1
        : number("maxgap", kv.get("maxgap"), 0, "none");
    return new BandParams(kv.get("algo"), kv.get("build"), kv.get("index"), tile, (int) k,
        maxGap, "true".equals(kv.get("ties")), kv.get("side"),
        "true".equals(kv.get("prefilter")));
  }

  /** {@code value} as a whole number of at least {@code min}; else a readable error. */
  private static long number(String key, String value, long min, String orElse) {
    long v;
    try {
      v = Long.parseLong(value);
    } catch (NumberFormatException e) {
      v = min - 1;
    }
    if (v < min) {
      throw new IllegalArgumentException("giql_band option " + key + "=" + value + " is not "
          + (min > 0 ? "a positive" : "a non-negative") + " integer"
          + (orElse == null ? "" : " (or " + orElse + ")"));
    }
    return v;
  }

  private static void check(String key, String value, String... allowed) {
    for (String a : allowed) {
      if (a.equals(value)) return;
    }
    throw new IllegalArgumentException(
        "giql_band option " + key + "=" + value + " is not one of " + String.join(", ", allowed));
  }

  /** {@link #side} as {@link io.giql.spark.index.Nearest}'s. */
  int nearestSide() {
    return io.giql.spark.index.Nearest.side(side);
  }

  @Override
  public String toString() {
    return "algo=" + algo + ";build=" + build + ";index=" + index + ";tile="
        + (tile == 0 ? "auto" : String.valueOf(tile))
        + (nearest > 0 ? ";nearest=" + nearest + ";maxgap=" + (maxGap < 0 ? "none" : maxGap)
            + (ties ? ";ties=true" : "") + ("both".equals(side) ? "" : ";side=" + side)
            + (prefilter ? ";prefilter=true" : "") : "");
  }
}
