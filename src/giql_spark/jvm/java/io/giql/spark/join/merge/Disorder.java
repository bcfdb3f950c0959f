package io.giql.spark.join.merge;

/** Thrown by a side's stream when its order breaks. */
final class Disorder extends RuntimeException {
  private static final long serialVersionUID = 1L;
  final String detail;

  Disorder(String detail) {
    super(detail, null, false, false);
    this.detail = detail;
  }
}
