package io.giql.spark.genomic;

/**
 * Bad input: a reason without the place, which the reader completes with the file and the line
 * (or record) before it reaches the user ({@link Sources#failure}).
 */
final class Bad extends RuntimeException {
  private static final long serialVersionUID = 1L;
  /** The header line the reason is about (1-based), or 0 for a record. */
  final int headerLine;

  Bad(String reason) {
    this(reason, 0);
  }

  Bad(String reason, int headerLine) {
    super(reason, null, false, false);
    this.headerLine = headerLine;
  }
}
