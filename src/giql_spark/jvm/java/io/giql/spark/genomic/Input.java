package io.giql.spark.genomic;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * A file's bytes through Hadoop's {@code FileSystem}, read forward through a window of a few
 * megabytes: one request per window, which on an object store is one round trip, not one per
 * BGZF block. A seek inside the window costs nothing; one outside it refills the window there.
 */
final class Input implements Closeable {
  static final int WINDOW = 4 << 20;

  final String path;
  final long length;
  private final FSDataInputStream in;
  private final byte[] window;
  private long windowStart;
  private int windowLen;

  Input(String path, Configuration conf) throws IOException {
    this(path, conf, WINDOW);
  }

  Input(String path, Configuration conf, int window) throws IOException {
    this.path = path;
    Path p = new Path(path);
    FileSystem fs = p.getFileSystem(conf);
    this.length = fs.getFileStatus(p).getLen();
    this.in = fs.open(p);
    this.window = new byte[(int) Math.max(64, Math.min(window, Math.max(length, 64)))];
  }

  /** Copies {@code len} bytes at {@code pos} into {@code dst}; fewer only at the end of the file. */
  int read(long pos, byte[] dst, int off, int len) throws IOException {
    int done = 0;
    while (done < len && pos + done < length) {
      long at = pos + done;
      if (at < windowStart || at >= windowStart + windowLen) fill(at);
      int from = (int) (at - windowStart);
      int n = Math.min(len - done, windowLen - from);
      System.arraycopy(window, from, dst, off + done, n);
      done += n;
    }
    return done;
  }

  void readFully(long pos, byte[] dst, int off, int len) throws IOException {
    if (read(pos, dst, off, len) != len) {
      throw new EOFException(path + ": unexpected end of file at byte " + (pos + len));
    }
  }

  /** The byte at {@code pos}, or -1 past the end. */
  int byteAt(long pos) throws IOException {
    if (pos >= length) return -1;
    if (pos < windowStart || pos >= windowStart + windowLen) fill(pos);
    return window[(int) (pos - windowStart)] & 0xff;
  }

  private void fill(long at) throws IOException {
    int n = (int) Math.min(window.length, length - at);
    in.readFully(at, window, 0, n);
    windowStart = at;
    windowLen = n;
  }

  @Override
  public void close() throws IOException {
    in.close();
  }
}
