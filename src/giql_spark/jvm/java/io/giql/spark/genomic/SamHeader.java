package io.giql.spark.genomic;

import java.io.IOException;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A SAM or BAM header: its reference sequence names (a BAM record names its reference by index)
 * and, for a BAM, where the records start. Any header line is accepted, as samtools accepts it
 * (a bare {@code @CO}, unknown record types).
 */
final class SamHeader implements Serializable {
  private static final long serialVersionUID = 1L;
  final List<String> references = new ArrayList<>();
  /** BAM: the virtual offset of the first record. */
  long firstRecord;
  int lines;

  static SamHeader readSam(ByteStream in) throws IOException {
    SamHeader h = new SamHeader();
    TextLines lines = new TextLines(in, 0, Long.MAX_VALUE, true);
    int n = 0;
    while (lines.next()) {
      byte[] b = lines.bytes();
      int off = lines.off(), len = lines.len();
      if (len == 0 || b[off] != '@') break;
      n++;
      if (len > 3 && b[off + 1] == 'S' && b[off + 2] == 'Q' && b[off + 3] == '\t') {
        String line = Text.string(b, off, off + len);
        for (String f : line.split("\t")) {
          if (f.startsWith("SN:")) h.references.add(f.substring(3));
        }
      }
    }
    h.lines = n;
    return h;
  }

  static SamHeader readBam(ByteStream in) throws IOException {
    SamHeader h = new SamHeader();
    byte[] four = new byte[4];
    if (!in.readFully(four, 0, 4) || four[0] != 'B' || four[1] != 'A' || four[2] != 'M' || four[3] != 1) {
      throw new Bad("not a BAM file (no BAM\\1 magic after decompression)");
    }
    int lText = int32(in);
    if (lText < 0) throw new Bad("BAM header text length " + lText);
    byte[] text = new byte[lText];
    if (!in.readFully(text, 0, lText)) throw new Bad("truncated BAM header");
    int nRef = int32(in);
    if (nRef < 0) throw new Bad("BAM header reference count " + nRef);
    for (int i = 0; i < nRef; i++) {
      int lName = int32(in);
      if (lName <= 0 || lName > 1 << 20) throw new Bad("BAM header reference name length " + lName);
      byte[] name = new byte[lName];
      if (!in.readFully(name, 0, lName)) throw new Bad("truncated BAM header");
      int nul = lName;
      while (nul > 0 && name[nul - 1] == 0) nul--;
      h.references.add(new String(name, 0, nul, StandardCharsets.UTF_8));
      int32(in);  // l_ref
    }
    h.firstRecord = in.position() < 0 ? -1 : in.position();
    return h;
  }

  static int int32(ByteStream in) throws IOException {
    byte[] b = new byte[4];
    if (!in.readFully(b, 0, 4)) throw new Bad("truncated BAM header");
    return (b[0] & 0xff) | (b[1] & 0xff) << 8 | (b[2] & 0xff) << 16 | (b[3] & 0xff) << 24;
  }

  static StructType schema(List<Tags.Def> tags) {
    List<StructField> t = new ArrayList<>();
    for (Tags.Def d : tags) t.add(VcfHeader.field(d.name, d.sparkType()));
    return new StructType(new StructField[] {
        VcfHeader.field("chrom", DataTypes.StringType), VcfHeader.field("start", DataTypes.LongType),
        VcfHeader.field("end", DataTypes.LongType), VcfHeader.field("qname", DataTypes.StringType),
        VcfHeader.field("flag", DataTypes.IntegerType), VcfHeader.field("mapq", DataTypes.ShortType),
        VcfHeader.field("cigar", DataTypes.StringType), VcfHeader.field("rnext", DataTypes.StringType),
        VcfHeader.field("pnext", DataTypes.LongType), VcfHeader.field("tlen", DataTypes.LongType),
        VcfHeader.field("seq", DataTypes.StringType), VcfHeader.field("qual", DataTypes.StringType),
        VcfHeader.field("tags", new StructType(t.toArray(new StructField[0]))),
    });
  }
}
