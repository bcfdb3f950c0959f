package io.giql.spark.genomic;

/** Bytes already in memory (a BCF header's text) as a stream. */
final class Bytes extends ByteStream {
  private boolean given;

  Bytes(byte[] data, int len) {
    this.buf = data;
    this.lim = len;
    this.given = true;
  }

  @Override
  boolean refill() {
    if (given) {
      given = false;
      return lim > 0;
    }
    pos = lim = 0;
    return false;
  }

  @Override
  long positionOf(int i) {
    return i;
  }

  @Override
  void seek(long position) {
    pos = (int) Math.min(position, lim);
  }

  @Override
  public void close() {}
}
