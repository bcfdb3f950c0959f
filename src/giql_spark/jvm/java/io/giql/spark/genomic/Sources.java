package io.giql.spark.genomic;

import java.io.IOException;

import org.apache.hadoop.conf.Configuration;

/** Opening a file's decompressed bytes, and naming the place of a failure. */
final class Sources {
  private Sources() {}

  static ByteStream stream(Input in, String compression) throws IOException {
    switch (compression) {
      case "bgzf": return new Bgzf(in);
      case "gzip": return new Plain(in, true);
      default: return new Plain(in, false);
    }
  }

  /**
   * The one line a user sees for {@code e}, raised reading the record at {@code position} of
   * {@code d}'s file: "path line N: reason" for a text format (the line counted from the file's
   * start, only now that it is needed), "path record N: reason" for a BAM, "path header line N:
   * reason" for a header.
   */
  static String failure(Described d, Configuration conf, Throwable e, long position) {
    String reason = reason(e);
    if (e instanceof Bad && ((Bad) e).headerLine < 0) return reason;  // a message that names its own place
    if (e instanceof Bad && ((Bad) e).headerLine > 0) return d.path + " header line " + ((Bad) e).headerLine + ": " + reason;
    if (position < 0) return d.path + ": " + reason;
    try {
      if (d.format.equals("bam") || d.format.equals("bcf")) {
        return d.path + " record " + binaryRecord(d, conf, position) + ": " + reason;
      }
      return d.path + " line " + line(d, conf, position) + ": " + reason;
    } catch (IOException | RuntimeException other) {
      return d.path + " at " + (d.compression.equals("bgzf") ? "virtual offset " : "byte ") + position + ": " + reason;
    }
  }

  static String reason(Throwable e) {
    String m = e.getMessage();
    if (m == null || m.isEmpty()) m = e.getClass().getSimpleName();
    int nl = m.indexOf('\n');
    return nl >= 0 ? m.substring(0, nl) : m;
  }

  private static long line(Described d, Configuration conf, long position) throws IOException {
    long lines = 1;
    try (Input in = new Input(d.path, conf); ByteStream s = stream(in, d.compression)) {
      while (true) {
        long at = s.position();
        if (at < 0 || at >= position) return lines;
        // count the newlines before position in this buffer
        int end = s.lim;
        if (s.positionOf(s.lim - 1) >= position) {
          end = s.pos;
          while (end < s.lim && s.positionOf(end) < position) end++;
        }
        for (int i = s.pos; i < end; i++) if (s.buf[i] == '\n') lines++;
        s.pos = end;
        if (end < s.lim) return lines;
      }
    }
  }

  private static long binaryRecord(Described d, Configuration conf, long position) throws IOException {
    long n = 1;
    try (Input in = new Input(d.path, conf); ByteStream s = stream(in, "bgzf")) {
      boolean bam = d.format.equals("bam");
      s.seek(bam ? d.sam.firstRecord : d.firstRecord);
      BamRecords.Raw raw = new BamRecords.Raw();
      BcfRecords.Raw bcf = new BcfRecords.Raw();
      while (s.position() >= 0 && s.position() < position && (bam ? raw.next(s) : bcf.next(s))) n++;
    }
    return n;
  }
}
