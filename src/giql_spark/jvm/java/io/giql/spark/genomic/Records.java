package io.giql.spark.genomic;

import org.apache.spark.sql.catalyst.InternalRow;

/** A text format's data lines as rows: one line in, one row out, or {@link Bad} with the reason. */
interface Records {
  /** The first byte of the format's header and comment lines ('#' or '@'). */
  char comment();

  InternalRow parse(byte[] b, int off, int len);

  /**
   * Whether a data line with no tab is no record to read but a line to pass over (a GFF3 file's
   * trailing FASTA section), rather than a malformed record.
   */
  default boolean passes(byte[] b, int off, int len) {
    return false;
  }

  /** Whether the records end here (GFF3's "##FASTA"): this comment line and all after it. */
  default boolean ends(byte[] b, int off, int len) {
    return false;
  }
}
