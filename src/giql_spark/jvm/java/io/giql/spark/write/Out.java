package io.giql.spark.write;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;

/** The part file being written, counting its bytes: a column chunk's metadata holds offsets. */
final class Out extends OutputStream {
  private final OutputStream inner;
  long pos;

  Out(OutputStream inner) {
    this.inner = new BufferedOutputStream(inner, 1 << 16);
  }

  @Override
  public void write(int b) throws IOException {
    inner.write(b);
    pos++;
  }

  @Override
  public void write(byte[] b, int off, int n) throws IOException {
    inner.write(b, off, n);
    pos += n;
  }

  @Override
  public void close() throws IOException {
    inner.close();
  }
}
