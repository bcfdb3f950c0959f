package io.giql.spark.genomic;

import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/**
 * SAM/BAM optional fields ("tags"): which the file's records carry and their types, found in its
 * first records (or given), in name order. Integers of any width are longs, {@code f} floats,
 * {@code A}, {@code Z}, {@code H} strings, {@code B} arrays of longs or floats.
 */
final class Tags {
  private Tags() {}

  /** A tag's name and type: "A", "i", "f", "Z", "H", or "B" with its element type ("Bi", "Bf", ...). */
  static final class Def implements Serializable {
    private static final long serialVersionUID = 1L;
    final String name;
    final String type;

    Def(String name, String type) {
      this.name = name;
      this.type = type;
    }

    boolean isArray() {
      return type.startsWith("B");
    }

    boolean isFloat() {
      return type.equals("f") || type.equals("Bf");
    }

    boolean isInteger() {
      return "cCsSiI".indexOf(type.charAt(type.length() - 1)) >= 0 && (type.length() == 1 || isArray());
    }

    DataType sparkType() {
      if (isArray()) return new ArrayType(isFloat() ? DataTypes.FloatType : DataTypes.LongType, true);
      if (isFloat()) return DataTypes.FloatType;
      if (isInteger()) return DataTypes.LongType;
      return DataTypes.StringType;
    }
  }

  /** The type a SAM text tag's type letter and value give ("B:i,1,2" is "Bi"). */
  static String textType(char t, byte[] b, int valueFrom, int valueTo) {
    if (t == 'B') return valueFrom < valueTo ? "B" + (char) b[valueFrom] : "Bi";
    return "cCsSI".indexOf(t) >= 0 ? "i" : String.valueOf(t);
  }

  /** {@code defs}: "name\ttype" lines. */
  static List<Def> given(String defs) {
    TreeMap<String, String> m = new TreeMap<>();
    for (String line : defs.split("\n")) {
      if (line.isEmpty()) continue;
      String[] p = line.split("\t", -1);
      if (p.length != 2 || p[0].length() != 2 || !p[1].matches("[AcCsSiIfZH]|B[cCsSiIf]")) {
        throw new IllegalArgumentException("tag_defs: each entry is (two-letter name, type such as 'i', 'Z', "
            + "'f', 'A', 'H' or 'Bi'), got " + line.replace('\t', ' '));
      }
      m.put(p[0], p[1]);
    }
    return list(m);
  }

  private static List<Def> list(TreeMap<String, String> m) {
    List<Def> out = new ArrayList<>();
    m.forEach((k, v) -> out.add(new Def(k, v)));
    return out;
  }

  /** The tags of the first {@code rows} records ({@code rows} < 0: all). */
  static List<Def> discover(SamHeader h, ByteStream in, String format, int rows) throws IOException {
    TreeMap<String, String> m = new TreeMap<>();
    try (ByteStream s = in) {
      if (format.equals("bam")) {
        s.seek(0);
        SamHeader.readBam(s);
        BamRecords.Raw raw = new BamRecords.Raw();
        for (int seen = 0; (rows < 0 || seen < rows) && raw.next(s); seen++) {
          raw.tagTypes(m);
        }
      } else {
        TextLines lines = new TextLines(s, 0, Long.MAX_VALUE, true);
        int[] tabs = new int[1 << 10];
        int seen = 0;
        while ((rows < 0 || seen < rows) && lines.next()) {
          byte[] b = lines.bytes();
          int off = lines.off(), len = lines.len();
          if (len == 0 || b[off] == '@') continue;
          seen++;
          int n = Text.tabs(b, off, len, tabs, tabs.length);
          for (int k = 10; k < n; k++) tag(b, tabs[k] + 1, k + 1 < n ? tabs[k + 1] : off + len, m);
        }
      }
    }
    return list(m);
  }

  private static void tag(byte[] b, int from, int to, TreeMap<String, String> m) {
    if (to - from < 5 || b[from + 2] != ':' || b[from + 4] != ':') return;
    String name = Text.string(b, from, from + 2);
    m.putIfAbsent(name, textType((char) b[from + 3], b, from + 5, to));
  }
}
