package io.giql.spark.join.merge;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;

/** A side's row groups in reading order, and where each key's rows are. */
final class Side {
  final List<ParquetLayout> files = new ArrayList<>();
  final List<int[]> groups = new ArrayList<>(); // {file, group}
  final LinkedHashMap<Object, KeyRuns> keys = new LinkedHashMap<>();
  long rows;
  /** Indexes (into groups) of the row groups that may hold NULL keys. */
  final List<Integer> nullGroups = new ArrayList<>();
  /** Per row group, {@link Bounds#group}; null when not known (no key is cut). */
  List<long[]> bounds;
  /** The mean hi - lo of the plan's sample of the side's rows; NaN when not sampled. */
  double width = Double.NaN;

  /**
   * A key's own bounds in a row group it shares with other keys (whose footer bounds cover
   * every key's rows), read from the rows; null when it cannot be read.
   */
  java.util.function.BiFunction<Integer, Object, long[]> shared;

  /** Per row group, whether no row there can have a NULL lo or hi ({@link Bounds#neverNull}). */
  boolean[] neverNull;

  void bound(Bounds b) {
    bounds = new ArrayList<>();
    neverNull = new boolean[groups.size()];
    for (int g = 0; g < groups.size(); g++) {
      bounds.add(b.group(group(g)));
      neverNull[g] = b.neverNull(group(g));
    }
  }

  /** {@link Bounds#group} of key {@code k}'s rows in row group {@code g}, or null. */
  long[] bounds(int g, Object k) {
    long[] b = bounds.get(g);
    ParquetLayout.RowGroup rg = group(g);
    if (b == null || Bounds.empty(b) || rg.keys == null || rg.keys.length <= 1) return b;
    return shared == null ? b : shared.apply(g, k);
  }

  ParquetLayout.RowGroup group(int g) {
    int[] fg = groups.get(g);
    return files.get(fg[0]).groups[fg[1]];
  }

  /**
   * Builds a side from its files' layouts; returns null and sets {@code why[0]} when the footers
   * do not show the keys in runs.
   */
  static Side of(List<ParquetLayout> layouts, String name, String[] why) {
    Side s = new Side();
    List<ParquetLayout> sorted = new ArrayList<>(layouts);
    sorted.sort((a, b) -> a.path.compareTo(b.path));
    int prev = -1;
    Object prevLast = null;
    for (ParquetLayout l : sorted) {
      if (l.problem != null) {
        why[0] = name + ": " + l.problem;
        return null;
      }
      int f = s.files.size();
      s.files.add(l);
      for (int i = 0; i < l.groups.length; i++) {
        ParquetLayout.RowGroup rg = l.groups[i];
        if (rg.rows == 0) continue;
        int g = s.groups.size();
        s.groups.add(new int[] {f, i});
        s.rows += rg.rows;
        if (rg.nullKeys != 0) s.nullGroups.add(g);
        if (rg.keys == null) {
          why[0] = name + ": the footer of " + l.path + " does not tell the keys of row group " + i
              + " (no dictionary and min != max)";
          return null;
        }
        if (rg.keys.length == 0) continue;
        for (int j = 0; j < rg.keys.length; j++) {
          Object k = rg.keys[j];
          KeyRuns kr = s.keys.get(k);
          if (kr == null) {
            kr = new KeyRuns(s.keys.size());
            s.keys.put(k, kr);
          } else if (!(j == 0 && prev >= 0 && k.equals(prevLast)
              && kr.groups.get(kr.groups.size() - 1) == prev)) {
            why[0] = name + ": key " + k + " is not in one run of row groups (" + l.path
                + ", row group " + i + "): the rows are not sorted by key";
            return null;
          }
          if (rg.keys.length == 1 && rg.hasPos && rg.nullKeys == 0) {
            if (rg.posMin < kr.posMaxSeen) {
              why[0] = name + ": positions of key " + k + " go back at row group " + i + " of "
                  + l.path + ": the rows are not sorted by position";
              return null;
            }
            kr.posMaxSeen = rg.posMax;
          } else {
            kr.posMaxSeen = Long.MIN_VALUE;
          }
          kr.groups.add(g);
          kr.rows += (double) rg.nonNullRows() / rg.keys.length;
        }
        prev = g;
        prevLast = rg.keys[rg.keys.length - 1];
      }
    }
    return s;
  }
}
