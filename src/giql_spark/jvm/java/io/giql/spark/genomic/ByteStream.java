package io.giql.spark.genomic;

import java.io.Closeable;
import java.io.IOException;

/**
 * Decompressed bytes read forward a buffer at a time, with the file position of each byte: a
 * BGZF virtual offset ({@code block address << 16 | offset in block}) or a plain byte offset.
 * Readers scan {@code buf[pos, lim)} in place and call {@link #refill} when they reach its end.
 */
abstract class ByteStream implements Closeable {
  byte[] buf = new byte[0];
  int pos;
  int lim;

  /** The next buffer of bytes into {@code buf[0, lim)}; false at the end of the input. */
  abstract boolean refill() throws IOException;

  /** The position of {@code buf[i]} (a BGZF virtual offset, or a byte offset). */
  abstract long positionOf(int i);

  /** Moves to {@code position} (as {@link #positionOf} gives it). */
  abstract void seek(long position) throws IOException;

  /** The position of the next byte, after a refill if the buffer is used up; -1 at the end. */
  final long position() throws IOException {
    if (pos >= lim && !refillNonEmpty()) return -1;
    return positionOf(pos);
  }

  final boolean refillNonEmpty() throws IOException {
    while (refill()) {
      if (lim > 0) return true;
    }
    return false;
  }

  /** Reads exactly {@code len} bytes; false if the input ends first (at its very start: -1 left). */
  final boolean readFully(byte[] dst, int off, int len) throws IOException {
    while (len > 0) {
      if (pos >= lim && !refillNonEmpty()) return false;
      int n = Math.min(len, lim - pos);
      System.arraycopy(buf, pos, dst, off, n);
      pos += n;
      off += n;
      len -= n;
    }
    return true;
  }

  /** Skips past the next '\n'; false if the input ends first. */
  final boolean skipLine() throws IOException {
    while (true) {
      if (pos >= lim && !refillNonEmpty()) return false;
      for (int i = pos; i < lim; i++) {
        if (buf[i] == '\n') {
          pos = i + 1;
          return true;
        }
      }
      pos = lim;
    }
  }
}
