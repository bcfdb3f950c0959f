package io.giql.spark.genomic;

/**
 * Bad input: a reason without the place, which the reader completes with the file and the line
 * (or record) before it reaches the user ({@link Sources#failure}).
 */
final class Bad extends RuntimeException {
  private static final long serialVersionUID = 1L;
  /** The header line the reason is about (1-based), 0 for a record, -1 for a reason that names its own place. */
  final int headerLine;

  Bad(String reason) {
    this(reason, 0);
  }

  Bad(String reason, int headerLine) {
    super(reason, null, false, false);
    this.headerLine = headerLine;
  }
}
