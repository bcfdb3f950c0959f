package io.giql.spark.genomic;

import java.io.IOException;
import java.io.InputStream;
import java.util.zip.GZIPInputStream;

/** Uncompressed bytes, or a plain gzip file decompressed from its start (positions count its output). */
final class Plain extends ByteStream {
  private static final int CHUNK = 1 << 20;
  private final Input in;
  private final InputStream gzip;
  private long start;  // position of buf[0]
  private long next;   // position after buf[lim - 1]

  Plain(Input in, boolean gzipped) throws IOException {
    this.in = in;
    this.buf = new byte[CHUNK];
    this.gzip = gzipped ? new GZIPInputStream(new Stream(in), CHUNK) : null;
  }

  @Override
  boolean refill() throws IOException {
    start = next;
    int n;
    if (gzip == null) {
      n = in.read(start, buf, 0, buf.length);
    } else {
      // what the decoder has now, so a truncated file fails where its bytes end, not before
      n = Math.max(0, gzip.read(buf, 0, buf.length));
    }
    pos = 0;
    lim = n;
    next = start + n;
    return n > 0;
  }

  @Override
  long positionOf(int i) {
    return start + i;
  }

  @Override
  void seek(long position) throws IOException {
    if (gzip != null) {
      if (position < start) throw new IOException(in.path + ": a gzip file is read from its start only");
      while (position >= next) {
        if (!refill()) return;
      }
      pos = (int) (position - start);
      return;
    }
    start = next = position;
    pos = lim = 0;
  }

  @Override
  public void close() throws IOException {
    if (gzip != null) gzip.close();
  }

  /** {@link Input} as a forward stream (for the gzip decoder). */
  private static final class Stream extends InputStream {
    private final Input in;
    private long at;

    Stream(Input in) {
      this.in = in;
    }

    @Override
    public int read() throws IOException {
      int b = in.byteAt(at);
      if (b >= 0) at++;
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (at >= in.length) return -1;
      int n = in.read(at, b, off, len);
      at += n;
      return n;
    }
  }
}
