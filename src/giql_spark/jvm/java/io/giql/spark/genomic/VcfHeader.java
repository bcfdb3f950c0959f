package io.giql.spark.genomic;

import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A VCF header: its INFO and FORMAT definitions and sample names, and the columns they give
 * (the same as giql-spark's oxbow reader gives: chrom, start, end, id, ref, alt, qual, filter,
 * info, and samples when asked for).
 *
 * <p>Read as bcftools reads it: any {@code ##fileformat} (or none), spaces inside structured
 * lines, a definition without Number (".") or Type (String), a definition repeated (the first
 * counts). A line it cannot read is named by its number: "header line N".
 */
final class VcfHeader implements Serializable {
  private static final long serialVersionUID = 1L;

  /** One INFO or FORMAT definition. */
  static final class Def implements Serializable {
    private static final long serialVersionUID = 1L;
    final String id;
    final String number;  // "1", "0", "A", "R", "G", ".", or a count
    final String type;    // Integer, Float, Flag, Character, String

    Def(String id, String number, String type) {
      this.id = id;
      this.number = number;
      this.type = type;
    }

    /** One value (Number=1, or a Flag), else a list. */
    boolean scalar() {
      return "1".equals(number) || "Flag".equals(type);
    }

    DataType element() {
      switch (type) {
        case "Integer": return DataTypes.IntegerType;
        case "Float": return DataTypes.FloatType;
        case "Flag": return DataTypes.BooleanType;
        default: return DataTypes.StringType;
      }
    }
  }

  final List<Def> info = new ArrayList<>();
  final List<Def> format = new ArrayList<>();
  final List<String> samples = new ArrayList<>();
  /** Header lines, the #CHROM line included. */
  int lines;
  /** BCF's dictionaries: of FILTER/INFO/FORMAT IDs ("PASS" first) and of contigs, by index (IDX= wins). */
  final java.util.TreeMap<Integer, String> strings = new java.util.TreeMap<>();
  final java.util.TreeMap<Integer, String> contigs = new java.util.TreeMap<>();

  static VcfHeader read(ByteStream in) throws IOException {
    VcfHeader h = new VcfHeader();
    TextLines lines = new TextLines(in, 0, Long.MAX_VALUE, true);
    Set<String> infoIds = new HashSet<>();
    Set<String> formatIds = new HashSet<>();
    int n = 0;
    while (lines.next()) {
      n++;
      String line = Text.string(lines.bytes(), lines.off(), lines.off() + lines.len());
      if (line.startsWith("##")) {
        Meta m;
        try {
          m = Meta.parse(line.substring(2), n);
        } catch (Bad e) {
          throw new Bad(e.getMessage(), n);
        }
        if (m == null) continue;
        h.dictionaries(m);
        if (m.key.equals("INFO") || m.key.equals("FORMAT")) {
          String id = m.get("ID");
          if (id == null || id.isEmpty()) throw new Bad(m.key + " definition without an ID", n);
          String number = orElse(m.get("Number"), ".");
          String type = orElse(m.get("Type"), "String");
          if (!Set.of("Integer", "Float", "Flag", "Character", "String").contains(type)) {
            throw new Bad(m.key + "/" + id + " has the unknown Type " + type, n);
          }
          if (m.key.equals("INFO") ? infoIds.add(id) : formatIds.add(id)) {
            (m.key.equals("INFO") ? h.info : h.format).add(new Def(id, number, type));
          }
        }
        continue;
      }
      if (line.startsWith("#CHROM") || line.startsWith("#")) {
        String[] cols = line.split("\t", -1);
        if (cols.length < 8) {
          throw new Bad("the column header line has " + cols.length + " tab-separated fields, not at least 8", n);
        }
        for (int i = 9; i < cols.length; i++) h.samples.add(cols[i]);
        h.lines = n;
        return h;
      }
      throw new Bad(n == 1 ? "not a VCF header (no ## or #CHROM line before the first record); unknown format or damaged file"
          : "no #CHROM column header line before the first record", n);
    }
    throw new Bad("no #CHROM column header line (an empty or truncated file?)", Math.max(n, 1));
  }

  /** The BCF dictionaries' entries of one structured line (the SAM/VCF specification, 6.2.1). */
  private void dictionaries(Meta m) {
    String id = m.get("ID");
    if (id == null) return;
    boolean isString = m.key.equals("FILTER") || m.key.equals("INFO") || m.key.equals("FORMAT");
    if (!isString && !m.key.equals("contig")) return;
    java.util.TreeMap<Integer, String> dict = isString ? strings : contigs;
    if (isString && dict.isEmpty()) dict.put(0, "PASS");
    if (dict.containsValue(id)) return;
    String idx = m.get("IDX");
    int at = idx != null && idx.matches("[0-9]+") ? Integer.parseInt(idx) : (dict.isEmpty() ? 0 : dict.lastKey() + 1);
    dict.put(at, id);
  }

  private static String orElse(String v, String dflt) {
    return v == null || v.isEmpty() ? dflt : v;
  }

  /** INFO/END, when declared as an Integer: the record's end when it has one. */
  Def end() {
    for (Def d : info) {
      if (d.id.equals("END") && d.type.equals("Integer")) return d;
    }
    return null;
  }

  static DataType typeOf(Def d, boolean isInfo) {
    if (isInfo && d.id.equals("END") && d.type.equals("Integer")) return DataTypes.LongType;  // a position
    if (!isInfo && d.id.equals("GT")) return GENOTYPE;
    return d.scalar() ? d.element() : new ArrayType(d.element(), true);
  }

  static final StructType GENOTYPE = new StructType(new StructField[] {
      field("allele", new ArrayType(DataTypes.IntegerType, true)),
      field("phased", new ArrayType(DataTypes.BooleanType, true)),
  });

  static StructField field(String name, DataType type) {
    return new StructField(name, type, true, Metadata.empty());
  }

  StructType infoType() {
    List<StructField> out = new ArrayList<>();
    for (Def d : info) out.add(field(d.id, typeOf(d, true)));
    return new StructType(out.toArray(new StructField[0]));
  }

  StructType sampleType() {
    List<StructField> out = new ArrayList<>();
    for (Def d : format) out.add(field(d.id, typeOf(d, false)));
    return new StructType(out.toArray(new StructField[0]));
  }

  /** The columns; {@code samples}: the sample names to read (null: none). */
  StructType schema(List<String> samples) {
    List<StructField> cols = new ArrayList<>(List.of(
        field("chrom", DataTypes.StringType), field("start", DataTypes.LongType),
        field("end", DataTypes.LongType), field("id", DataTypes.StringType),
        field("ref", DataTypes.StringType), field("alt", new ArrayType(DataTypes.StringType, true)),
        field("qual", DataTypes.DoubleType), field("filter", DataTypes.StringType),
        field("info", infoType())));
    if (samples != null) {
      StructType one = sampleType();
      List<StructField> each = new ArrayList<>();
      for (String s : samples) each.add(field(s, one));
      cols.add(field("samples", new StructType(each.toArray(new StructField[0]))));
    }
    return new StructType(cols.toArray(new StructField[0]));
  }

  /** {@code wanted} ("*" or a comma-separated list) as sample names, each checked against the header. */
  List<String> samples(String wanted, String path) {
    if (wanted == null) return null;
    if (wanted.equals("*")) return new ArrayList<>(samples);
    List<String> out = new ArrayList<>();
    for (String s : wanted.split("\t")) {
      if (s.isEmpty()) continue;
      if (!samples.contains(s)) {
        throw new IllegalArgumentException(path + ": no sample " + s + " in the header (it has "
            + (samples.isEmpty() ? "none" : String.join(", ", samples.subList(0, Math.min(10, samples.size()))))
            + (samples.size() > 10 ? ", ..." : "") + ")");
      }
      out.add(s);
    }
    return out;
  }
}
