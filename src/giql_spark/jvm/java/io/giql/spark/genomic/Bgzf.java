package io.giql.spark.genomic;

import java.io.IOException;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

/**
 * A BGZF file (SAM specification, section 4.1) read block by block: each block is a gzip member of
 * at most 64 KiB whose header's extra field {@code BC} gives its compressed size, so a block's
 * start can be checked, and the next one found, without decompressing anything.
 */
final class Bgzf extends ByteStream {
  static final int MAX_BLOCK = 1 << 16;
  private static final int HEADER = 18;

  private final Input in;
  private final Inflater inflater = new Inflater(true);
  private final byte[] compressed = new byte[MAX_BLOCK];
  private long block = -1;  // compressed address of the block in buf
  private long next;        // compressed address of the block after it
  /** Blocks decompressed so far. */
  long blocks;

  Bgzf(Input in) {
    this.in = in;
    this.buf = new byte[MAX_BLOCK];
  }

  static long address(long virtual) {
    return virtual >>> 16;
  }

  static long virtual(long address, int offset) {
    return (address << 16) | offset;
  }

  /** The compressed size of the block at {@code at}, or -1 when no valid block header is there. */
  static int blockSize(Input in, long at) throws IOException {
    if (at + HEADER > in.length) return -1;
    if (in.byteAt(at) != 0x1f || in.byteAt(at + 1) != 0x8b || in.byteAt(at + 2) != 8
        || (in.byteAt(at + 3) & 4) == 0) {
      return -1;
    }
    int xlen = in.byteAt(at + 10) | in.byteAt(at + 11) << 8;
    // the extra field's subfields: find BC (its value is the block size - 1)
    long p = at + 12;
    long end = p + xlen;
    while (p + 4 <= end) {
      int si1 = in.byteAt(p);
      int si2 = in.byteAt(p + 1);
      int slen = in.byteAt(p + 2) | in.byteAt(p + 3) << 8;
      if (si1 == 'B' && si2 == 'C' && slen == 2) {
        int size = (in.byteAt(p + 4) | in.byteAt(p + 5) << 8) + 1;
        return size >= xlen + 20 && at + size <= in.length ? size : -1;
      }
      p += 4 + slen;
    }
    return -1;
  }

  /**
   * The address of the first block at or after {@code from} (and before {@code limit}), or
   * {@code in.length} when there is none: a block header whose size leads to another block header
   * (or exactly to the end of the file), twice, so that compressed bytes that happen to look like
   * a header are not taken for one.
   */
  static long nextBlock(Input in, long from, long limit) throws IOException {
    for (long at = Math.max(0, from); at < Math.min(limit, in.length); at++) {
      if (in.byteAt(at) != 0x1f) continue;
      if (chain(in, at, 3)) return at;
    }
    return in.length;
  }

  private static boolean chain(Input in, long at, int links) throws IOException {
    for (int i = 0; i < links; i++) {
      if (at == in.length) return true;
      int size = blockSize(in, at);
      if (size < 0) return false;
      at += size;
    }
    return true;
  }

  /** Whether the file starts with a BGZF block. */
  static boolean isBgzf(Input in) throws IOException {
    return blockSize(in, 0) > 0;
  }

  @Override
  boolean refill() throws IOException {
    long at = block < 0 ? 0 : next;
    return load(at);
  }

  private boolean load(long at) throws IOException {
    if (at >= in.length) {
      pos = lim = 0;
      return false;
    }
    int size = blockSize(in, at);
    if (size < 0) throw new IOException(in.path + ": not a BGZF block at byte " + at + " (damaged or truncated file)");
    in.readFully(at, compressed, 0, size);
    int xlen = (compressed[10] & 0xff) | (compressed[11] & 0xff) << 8;
    int dataStart = 12 + xlen;
    int dataLen = size - dataStart - 8;
    int isize = (compressed[size - 4] & 0xff) | (compressed[size - 3] & 0xff) << 8
        | (compressed[size - 2] & 0xff) << 16 | (compressed[size - 1] & 0xff) << 24;
    if (isize < 0 || isize > MAX_BLOCK) {
      throw new IOException(in.path + ": BGZF block at byte " + at + " claims " + isize + " bytes");
    }
    inflater.reset();
    inflater.setInput(compressed, dataStart, dataLen);
    int n = 0;
    try {
      while (n < isize) {
        int k = inflater.inflate(buf, n, isize - n);
        if (k == 0 && (inflater.finished() || inflater.needsInput())) break;
        n += k;
      }
    } catch (DataFormatException e) {
      throw new IOException(in.path + ": BGZF block at byte " + at + " does not decompress (" + e.getMessage() + ")");
    }
    if (n != isize) {
      throw new IOException(in.path + ": BGZF block at byte " + at + " decompresses to " + n + " of " + isize + " bytes");
    }
    blocks++;
    block = at;
    next = at + size;
    pos = 0;
    lim = n;
    return true;
  }

  @Override
  long positionOf(int i) {
    return virtual(block, i);
  }

  @Override
  void seek(long position) throws IOException {
    long at = address(position);
    int off = (int) (position & 0xffff);
    if (at != block || lim == 0) {
      if (!load(at)) return;
    }
    if (off > lim) throw new IOException(in.path + ": virtual offset " + position + " is past its block's end");
    pos = off;
  }

  /** Address of the block after the current one. */
  long nextAddress() {
    return next;
  }

  @Override
  public void close() {
    inflater.end();
  }
}
