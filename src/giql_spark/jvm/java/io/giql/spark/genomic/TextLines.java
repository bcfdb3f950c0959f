package io.giql.spark.genomic;

import java.io.IOException;

/**
 * The lines of one split of a text file: those whose first byte lies in {@code (start, end]}
 * (positions as the {@link ByteStream} gives them), and for the file's first split in
 * {@code [start, end]}. Every split but the first skips to the end of the line it starts in,
 * and reads on past {@code end} to finish the last line it starts, so a line that straddles a
 * split's boundary is read once, by the split it starts in (Hadoop's line reader does the same).
 *
 * <p>A line is {@code bytes()[off(), off() + len())}, without its '\n' (and '\r'); it points into
 * the stream's buffer where the line lies inside one buffer, which it almost always does.
 */
final class TextLines {
  private final ByteStream in;
  private final long end;
  private final boolean exclusive;
  private byte[] line = new byte[1 << 12];
  private byte[] bytes;
  private int off;
  private int len;
  private long start;

  /** {@code first}: the split is the file's first, so its first line is its own. */
  TextLines(ByteStream in, long start, long end, boolean first) throws IOException {
    this.in = in;
    this.end = end;
    this.exclusive = false;
    in.seek(start);
    if (!first) in.skipLine();
  }

  /** The lines starting in {@code [start, end)}, {@code start} a line's first byte (an index chunk). */
  private TextLines(ByteStream in, long start, long end) throws IOException {
    this.in = in;
    this.end = end;
    this.exclusive = true;
    in.seek(start);
  }

  static TextLines chunk(ByteStream in, long start, long end) throws IOException {
    return new TextLines(in, start, end);
  }

  /** The next line, or false past the split's end. */
  boolean next() throws IOException {
    long at = in.position();
    if (at < 0 || at > end || (exclusive && at == end)) return false;
    start = at;
    byte[] b = in.buf;
    int from = in.pos;
    for (int i = from; i < in.lim; i++) {
      if (b[i] == '\n') {
        in.pos = i + 1;
        set(b, from, i - from);
        return true;
      }
    }
    // the line goes on into the next buffer: gather it
    int n = 0;
    while (true) {
      int nl = -1;
      for (int i = in.pos; i < in.lim; i++) {
        if (in.buf[i] == '\n') {
          nl = i;
          break;
        }
      }
      int take = (nl >= 0 ? nl : in.lim) - in.pos;
      if (n + take > line.length) {
        byte[] grown = new byte[Math.max(line.length * 2, n + take)];
        System.arraycopy(line, 0, grown, 0, n);
        line = grown;
      }
      System.arraycopy(in.buf, in.pos, line, n, take);
      n += take;
      if (nl >= 0) {
        in.pos = nl + 1;
        break;
      }
      in.pos = in.lim;
      if (!in.refillNonEmpty()) break;  // the file's last line has no '\n'
    }
    set(line, 0, n);
    return true;
  }

  private void set(byte[] b, int o, int n) {
    if (n > 0 && b[o + n - 1] == '\r') n--;
    bytes = b;
    off = o;
    len = n;
  }

  byte[] bytes() {
    return bytes;
  }

  int off() {
    return off;
  }

  int len() {
    return len;
  }

  /** The position of the line's first byte. */
  long start() {
    return start;
  }
}
