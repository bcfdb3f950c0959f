package io.giql.spark.genomic;

import java.nio.charset.StandardCharsets;

import org.apache.spark.unsafe.types.UTF8String;

/** Parsing values out of a line's bytes in place. */
final class Text {
  static final long NOT_A_NUMBER = Long.MIN_VALUE;

  private Text() {}

  /** The positions of the tabs of {@code b[off, off + len)}, up to {@code max}; returns how many. */
  static int tabs(byte[] b, int off, int len, int[] at, int max) {
    int n = 0;
    int end = off + len;
    for (int i = off; i < end && n < max; i++) {
      if (b[i] == '\t') at[n++] = i;
    }
    return n;
  }

  /** A decimal integer (optional sign) in {@code b[from, to)}; {@link #NOT_A_NUMBER} if it is not one or overflows. */
  static long parseLong(byte[] b, int from, int to) {
    if (from >= to) return NOT_A_NUMBER;
    boolean neg = false;
    int i = from;
    if (b[i] == '-' || b[i] == '+') {
      neg = b[i] == '-';
      if (++i == to) return NOT_A_NUMBER;
    }
    long v = 0;
    if (to - i <= 18) {  // 18 digits cannot overflow: no check per digit
      for (; i < to; i++) {
        int d = b[i] - '0';
        if (d < 0 || d > 9) return NOT_A_NUMBER;
        v = v * 10 + d;
      }
      return neg ? -v : v;
    }
    for (; i < to; i++) {
      int d = b[i] - '0';
      if (d < 0 || d > 9) return NOT_A_NUMBER;
      if (v > (Long.MAX_VALUE - d) / 10) return NOT_A_NUMBER;
      v = v * 10 + d;
    }
    return neg ? -v : v;
  }

  static boolean isDot(byte[] b, int from, int to) {
    return to - from == 1 && b[from] == '.';
  }

  static String string(byte[] b, int from, int to) {
    return new String(b, from, to - from, StandardCharsets.UTF_8);
  }

  static UTF8String utf8(byte[] b, int from, int to) {
    return UTF8String.fromBytes(java.util.Arrays.copyOfRange(b, from, to));
  }

  /** A float as Java reads it ("nan", "inf" and "infinity" too, as htslib does); NaN-boxed failure via the flag. */
  static float parseFloat(byte[] b, int from, int to) throws NumberFormatException {
    String s = string(b, from, to).trim();
    switch (s.toLowerCase(java.util.Locale.ROOT)) {
      case "nan": case "+nan": case "-nan": return Float.NaN;
      case "inf": case "+inf": case "infinity": case "+infinity": return Float.POSITIVE_INFINITY;
      case "-inf": case "-infinity": return Float.NEGATIVE_INFINITY;
      default: break;
    }
    if (s.isEmpty() || s.indexOf('d') >= 0 || s.indexOf('D') >= 0 || s.indexOf('f') >= 0 || s.indexOf('F') >= 0) {
      throw new NumberFormatException(s);
    }
    return Float.parseFloat(s);
  }

  /** {@code b[from, to)} for a message: at most 60 characters. */
  static String shown(byte[] b, int from, int to) {
    String s = string(b, from, Math.min(to, from + 60));
    return to - from > 60 ? s + "..." : s;
  }
}
