package io.giql.spark.write;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Locale;
import java.util.zip.GZIPOutputStream;

import org.apache.parquet.format.CompressionCodec;
import org.xerial.snappy.Snappy;

import com.github.luben.zstd.Zstd;

/** A page's compression, by the name Spark's {@code spark.sql.parquet.compression.codec} takes. */
enum Codec {
  UNCOMPRESSED(CompressionCodec.UNCOMPRESSED, ""),
  SNAPPY(CompressionCodec.SNAPPY, ".snappy"),
  GZIP(CompressionCodec.GZIP, ".gz"),
  ZSTD(CompressionCodec.ZSTD, ".zstd");

  static final String ACCEPTED = "snappy, zstd, gzip, uncompressed (or none)";
  // Spark's parquet.compression.codec.zstd.level default.
  private static final int ZSTD_LEVEL = 3;

  final CompressionCodec thrift;
  /** What Spark puts before ".parquet" in a part file's name. */
  final String suffix;

  Codec(CompressionCodec thrift, String suffix) {
    this.thrift = thrift;
    this.suffix = suffix;
  }

  static Codec of(String name) {
    String n = name == null ? "snappy" : name.toLowerCase(Locale.ROOT);
    switch (n) {
      case "none":
      case "uncompressed":
        return UNCOMPRESSED;
      case "snappy":
        return SNAPPY;
      case "gzip":
        return GZIP;
      case "zstd":
        return ZSTD;
      default:
        throw new IllegalArgumentException(
            "giql-parquet cannot write compression '" + name + "'; accepted: " + ACCEPTED);
    }
  }

  /**
   * Compresses the first {@code len} bytes of {@code raw} into {@code to} (cleared first; it
   * grows as needed, and is reused page after page).
   */
  void compress(byte[] raw, int len, Bytes to) {
    to.clear();
    try {
      switch (this) {
        case SNAPPY:
          to.reserve(Snappy.maxCompressedLength(len));
          to.len = Snappy.compress(raw, 0, len, to.buf, 0);
          return;
        case ZSTD: {
          to.reserve((int) Zstd.compressBound(len));
          long n = Zstd.compressByteArray(to.buf, 0, to.buf.length, raw, 0, len, ZSTD_LEVEL);
          if (Zstd.isError(n)) {
            throw new IOException("zstd: " + Zstd.getErrorName(n));
          }
          to.len = (int) n;
          return;
        }
        case GZIP: {
          ByteArrayOutputStream bytes = new ByteArrayOutputStream(len / 2 + 64);
          try (GZIPOutputStream gz = new GZIPOutputStream(bytes)) {
            gz.write(raw, 0, len);
          }
          byte[] b = bytes.toByteArray();
          to.put(b, 0, b.length);
          return;
        }
        default:
          throw new IllegalStateException("an uncompressed page is written as it is");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
