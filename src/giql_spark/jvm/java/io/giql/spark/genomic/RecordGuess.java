package io.giql.spark.genomic;

import java.io.IOException;

/**
 * Where a BAM's or BCF's first record after a byte offset starts, for a file without an index: the
 * first BGZF block at or after the offset, then the first offset in its decompressed bytes where a
 * record's fields are consistent (lengths, reference indices, a name's terminator) and so are the
 * next {@link #CHAIN} records' (Hadoop-BAM's split guesser checks records alike). Two splits that
 * meet at an offset find the same record, so each record is read by exactly one.
 */
final class RecordGuess {
  static final int CHAIN = 3;

  private RecordGuess() {}

  /** The virtual offset of the first record at or after compressed byte {@code from}, or Long.MAX_VALUE. */
  static long first(Input in, Described d, long from) throws IOException {
    long block = Bgzf.nextBlock(in, from, in.length);
    if (block >= in.length) return Long.MAX_VALUE;
    // the decompressed bytes of a few blocks from there: a record may start in any of them
    byte[] data = new byte[0];
    long[] blockAt = new long[0];
    int[] blockStart = new int[0];
    try (Bgzf z = new Bgzf(in)) {
      z.seek(Bgzf.virtual(block, 0));
      for (int k = 0; k < 8; k++) {
        if (z.lim == 0 && !z.refillNonEmpty()) break;
        long addr = Bgzf.address(z.positionOf(0));
        byte[] grown = java.util.Arrays.copyOf(data, data.length + z.lim);
        System.arraycopy(z.buf, 0, grown, data.length, z.lim);
        blockAt = java.util.Arrays.copyOf(blockAt, blockAt.length + 1);
        blockStart = java.util.Arrays.copyOf(blockStart, blockStart.length + 1);
        blockAt[blockAt.length - 1] = addr;
        blockStart[blockStart.length - 1] = data.length;
        data = grown;
        if (!z.refill()) break;
      }
    }
    int firstBlockEnd = blockStart.length > 1 ? blockStart[1] : data.length;
    for (int i = 0; i < data.length - 4; i++) {
      if (chain(data, i, d)) {
        int b = 0;
        while (b + 1 < blockStart.length && blockStart[b + 1] <= i) b++;
        return Bgzf.virtual(blockAt[b], i - blockStart[b]);
      }
      if (i >= firstBlockEnd && i > Bgzf.MAX_BLOCK * 4) break;
    }
    return Long.MAX_VALUE;
  }

  private static boolean chain(byte[] b, int at, Described d) {
    for (int k = 0; k < CHAIN; k++) {
      if (at == b.length) return true;  // the data ends at a record's end: as good as the next one
      int len = d.format.equals("bam") ? bam(b, at, d.sam.references.size()) : bcf(b, at, d.vcf.contigs.size());
      if (len < 0) return false;
      at += len;
      if (at > b.length) return k > 0;  // the record runs past the bytes read: trust the ones before it
    }
    return true;
  }

  private static int i32(byte[] b, int at) {
    return BcfRecords.i32(b, at);
  }

  /** The record's total length (its block_size field included) when a BAM record plausibly starts at {@code at}, else -1. */
  static int bam(byte[] b, int at, int nRef) {
    if (at + 36 > b.length) return -1;
    int size = i32(b, at);
    if (size < 32 || size > 1 << 24) return -1;
    int ref = i32(b, at + 4);
    int pos = i32(b, at + 8);
    int lName = b[at + 12] & 0xff;
    int nCigar = (b[at + 16] & 0xff) | (b[at + 17] & 0xff) << 8;
    int lSeq = i32(b, at + 20);
    int nextRef = i32(b, at + 24);
    int nextPos = i32(b, at + 28);
    if (ref < -1 || ref >= nRef || nextRef < -1 || nextRef >= nRef || pos < -1 || nextPos < -1) return -1;
    if (lName < 1 || lSeq < 0 || lSeq > 1 << 22) return -1;
    long fixed = 32L + lName + 4L * nCigar + (lSeq + 1) / 2 + lSeq;
    if (fixed > size) return -1;
    int name = at + 36;
    if (name + lName <= b.length) {
      if (b[name + lName - 1] != 0) return -1;
      for (int i = name; i < name + lName - 1; i++) if (b[i] < '!' || b[i] > '~') return -1;
    }
    return size + 4;
  }

  /** As {@link #bam}, for a BCF record (its two length fields included). */
  static int bcf(byte[] b, int at, int nContigs) {
    if (at + 32 > b.length) return -1;
    int shared = i32(b, at);
    int indiv = i32(b, at + 4);
    if (shared < 24 || shared > 1 << 26 || indiv < 0 || indiv > 1 << 28) return -1;
    int chrom = i32(b, at + 8);
    int pos = i32(b, at + 12);
    int rlen = i32(b, at + 16);
    int nAllele = (b[at + 26] & 0xff) | (b[at + 27] & 0xff) << 8;
    if (chrom < 0 || chrom >= Math.max(1, nContigs) || pos < -1 || rlen < 0 || nAllele < 1) return -1;
    return 8 + shared + indiv;
  }
}
