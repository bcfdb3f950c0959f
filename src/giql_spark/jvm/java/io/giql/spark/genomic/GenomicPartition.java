package io.giql.spark.genomic;

import java.util.List;

import org.apache.spark.sql.connector.read.InputPartition;

/**
 * One split: a range of the file ({@code start}, {@code end}: byte offsets of a plain file, of a
 * BGZF file's compressed bytes, or a BAM's record offsets), or the index chunks of a region.
 */
final class GenomicPartition implements InputPartition {
  private static final long serialVersionUID = 1L;
  final int index;
  final long start;
  final long end;
  final boolean first;
  /** Index chunks as virtual offset pairs, or null. */
  final long[] chunks;
  /**
   * A binary split of compressed bytes {@code [start, end)} of a file without an index: it reads
   * from the first record its bytes hold ({@code first}: {@code start} is that record's virtual
   * offset) to the first record the next split's bytes hold.
   */
  final boolean guessed;

  private GenomicPartition(int index, long start, long end, boolean first, long[] chunks, boolean guessed) {
    this.index = index;
    this.start = start;
    this.end = end;
    this.first = first;
    this.chunks = chunks;
    this.guessed = guessed;
  }

  private GenomicPartition(int index, long start, long end, boolean first, long[] chunks) {
    this(index, start, end, first, chunks, false);
  }

  static GenomicPartition guessed(int index, long start, long end, boolean first) {
    return new GenomicPartition(index, start, end, first, null, true);
  }

  static GenomicPartition range(int index, long start, long end, boolean first) {
    return new GenomicPartition(index, start, end, first, null);
  }

  /** FASTA chunks as (record, start, end) triples. */
  static GenomicPartition triples(int index, long[] triples) {
    return new GenomicPartition(index, 0, 0, false, triples);
  }

  static GenomicPartition chunks(int index, List<Long> pairs) {
    long[] c = new long[pairs.size()];
    for (int i = 0; i < c.length; i++) c[i] = pairs.get(i);
    return new GenomicPartition(index, c[0], c[c.length - 1], false, c);
  }
}
