package io.giql.spark;

import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The options string of a giql_band marker: {@code key=value} pairs separated by ';' or ','.
 *
 * <ul>
 *   <li>{@code algo}: {@code auto} (default) or {@code broadcast} (interval index, one side broadcast).</li>
 *   <li>{@code build}: {@code auto} (default), {@code left} or {@code right}: which side the
 *       broadcast index is built from.</li>
 *   <li>{@code index}: {@code auto} (default), {@code tree} (implicit augmented interval tree)
 *       or {@code scan} (sorted starts plus the widest interval of the key).</li>
 * </ul>
 */
final class BandParams implements Serializable {
  private static final long serialVersionUID = 1L;

  final String algo;
  final String build;
  final String index;

  private BandParams(String algo, String build, String index) {
    this.algo = algo;
    this.build = build;
    this.index = index;
  }

  /** Parses {@code text}; throws IllegalArgumentException with a readable message. */
  static BandParams parse(String text) {
    Map<String, String> kv = new LinkedHashMap<>();
    kv.put("algo", "auto");
    kv.put("build", "auto");
    kv.put("index", "auto");
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
              "giql_band has no option '" + k + "' (options: algo, build, index)");
        }
        kv.put(k, v);
      }
    }
    check("algo", kv.get("algo"), "auto", "broadcast");
    check("build", kv.get("build"), "auto", "left", "right");
    check("index", kv.get("index"), "auto", "tree", "scan");
    return new BandParams(kv.get("algo"), kv.get("build"), kv.get("index"));
  }

  private static void check(String key, String value, String... allowed) {
    for (String a : allowed) {
      if (a.equals(value)) return;
    }
    throw new IllegalArgumentException(
        "giql_band option " + key + "=" + value + " is not one of " + String.join(", ", allowed));
  }

  @Override
  public String toString() {
    return "algo=" + algo + ";build=" + build + ";index=" + index;
  }
}
