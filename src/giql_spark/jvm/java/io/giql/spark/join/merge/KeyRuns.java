package io.giql.spark.join.merge;

import java.util.ArrayList;
import java.util.List;

final class KeyRuns {
  final int position;      // order of first appearance on its side
  final List<Integer> groups = new ArrayList<>();
  double rows;
  long posMaxSeen = Long.MIN_VALUE; // last single-key row group's max position

  KeyRuns(int position) {
    this.position = position;
  }
}
