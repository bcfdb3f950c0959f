package io.giql.spark.genomic;

import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * The attributes a GFF3 or GTF file's records carry (column 9): each name, and whether it holds a
 * list ("Array": a GFF3 value with commas, a GTF name repeated in a record) or one "String". Found
 * in the first records (or given), in name order, as giql-spark's oxbow reader lists them.
 *
 * <p>Column 9 is read in either style whatever the file's extension, as bedtools does: GFF3's
 * {@code key=value;key=v1,v2} and GTF's {@code key "value"; key value;}.
 */
final class GxfAttributes implements Serializable {
  private static final long serialVersionUID = 1L;
  final List<String> names = new ArrayList<>();
  final List<Boolean> lists = new ArrayList<>();

  /** {@code defs}: "name\ttype" lines, type "String" or "Array". */
  static GxfAttributes given(String defs, String format) {
    TreeMap<String, Boolean> m = new TreeMap<>();
    for (String line : defs.split("\n")) {
      if (line.isEmpty()) continue;
      String[] p = line.split("\t", -1);
      if (p.length != 2 || !(p[1].equals("String") || p[1].equals("Array"))) {
        throw new IllegalArgumentException("attribute_defs: each entry is (name, 'String' or 'Array'), got " + line);
      }
      m.put(p[0], p[1].equals("Array"));
    }
    return of(m);
  }

  private static GxfAttributes of(TreeMap<String, Boolean> m) {
    GxfAttributes a = new GxfAttributes();
    m.forEach((k, v) -> {
      a.names.add(k);
      a.lists.add(v);
    });
    return a;
  }

  /** The attributes of the first {@code rows} records ({@code rows} < 0: all of them). */
  static GxfAttributes discover(ByteStream in, String format, int rows) throws IOException {
    TreeMap<String, Boolean> m = new TreeMap<>();
    TextLines lines = new TextLines(in, 0, Long.MAX_VALUE, true);
    int seen = 0;
    int[] tabs = new int[9];
    while ((rows < 0 || seen < rows) && lines.next()) {
      byte[] b = lines.bytes();
      int off = lines.off(), len = lines.len();
      if (len == 0) continue;
      if (b[off] == '#') {
        if (GxfRecords.isFasta(b, off, len)) break;
        continue;
      }
      if (Text.tabs(b, off, len, tabs, 8) < 8) continue;  // a short line: the read names it
      seen++;
      int from = tabs[7] + 1, to = off + len;
      for (String[] kv : pairs(b, from, to)) {
        boolean list = kv[2] != null;
        m.merge(kv[0], list, (x, y) -> x || y);
      }
    }
    return of(m);
  }

  /**
   * Column 9's (name, value, "list" or null) entries in order; a GTF name repeated in one record
   * is marked a list at its second entry. Values are percent-decoded (GFF3) or unquoted (GTF).
   */
  static List<String[]> pairs(byte[] b, int from, int to) {
    List<String[]> out = new ArrayList<>();
    if (from >= to || Text.isDot(b, from, to)) return out;
    int i = from;
    while (i < to) {
      // one entry up to ';' outside quotes
      int e = i;
      boolean quoted = false;
      while (e < to && (quoted || b[e] != ';')) {
        if (b[e] == '"') quoted = !quoted;
        e++;
      }
      int s = i;
      while (s < e && b[s] == ' ') s++;
      int t = e;
      while (t > s && b[t - 1] == ' ') t--;
      if (s < t) {
        int eq = -1, sp = -1;
        for (int k = s; k < t; k++) {
          if (b[k] == '=' && eq < 0 && sp < 0) eq = k;
          if ((b[k] == ' ' || b[k] == '\t') && sp < 0 && eq < 0) sp = k;
        }
        String name;
        String value;
        boolean gff3 = eq >= 0;
        if (gff3) {
          name = decode(Text.string(b, s, eq));
          value = Text.string(b, eq + 1, t);
        } else if (sp >= 0) {
          name = Text.string(b, s, sp);
          int v = sp;
          while (v < t && (b[v] == ' ' || b[v] == '\t')) v++;
          value = Text.string(b, v, t);
          if (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")) {
            value = value.substring(1, value.length() - 1);
          }
        } else {
          name = Text.string(b, s, t);
          value = null;  // a bare name (a GFF3 flag)
        }
        String list = null;
        if (gff3 && value.indexOf(',') >= 0) list = "list";
        for (String[] o : out) {
          if (o[0].equals(name)) {
            list = "list";
            o[2] = "list";
          }
        }
        out.add(new String[] {name, value, list, gff3 ? "gff3" : "gtf"});
      }
      i = e + 1;
    }
    return out;
  }

  /** GFF3's percent-encoding (%3B for ';', %2C for ',' ...). */
  static String decode(String s) {
    if (s.indexOf('%') < 0) return s;
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(s.length());
    byte[] b = s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    for (int i = 0; i < b.length; i++) {
      if (b[i] == '%' && i + 2 < b.length + 0 && i + 2 <= b.length - 1 + 0 && hex(b[i + 1]) >= 0 && hex(b[i + 2]) >= 0) {
        out.write(hex(b[i + 1]) * 16 + hex(b[i + 2]));
        i += 2;
      } else {
        out.write(b[i]);
      }
    }
    return new String(out.toByteArray(), java.nio.charset.StandardCharsets.UTF_8);
  }

  private static int hex(byte c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
}
