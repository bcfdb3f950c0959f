package io.giql.spark.genomic;

import java.io.IOException;
import java.util.HashSet;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The rows of a FASTA split: its chunks read through the index, each only its own bytes (a
 * bgzip file: from the block the .gzi names), or, without an index (or a plain gzip file), the
 * whole file read line by line.
 */
final class FastaSplit extends GenomicReaders.Split {
  private final GenomicPartition p;
  private final FastaIndex fi;
  private final long chunkSize;
  private int next;
  // whole-file reading
  private TextLines lines;
  private final Set<String> seen = new HashSet<>();
  private String name;
  private boolean skipping;
  private final StringBuilder bases = new StringBuilder();
  private long start;
  private boolean ended;
  private final java.util.ArrayDeque<InternalRow> ready = new java.util.ArrayDeque<>();

  FastaSplit(Described d, GenomicPartition p, Configuration conf) throws IOException {
    super(d, conf);
    this.p = p;
    this.fi = d.fasta;
    this.chunkSize = d.chunkSize;
  }

  @Override
  InternalRow read() throws IOException {
    return p.chunks != null ? chunk() : whole();
  }

  private InternalRow chunk() throws IOException {
    if (next >= p.chunks.length) return null;
    int i = (int) p.chunks[next];
    long s = p.chunks[next + 1], e = p.chunks[next + 2];
    next += 3;
    records++;
    String chrom = fi.names.get(i);
    if (e == s) return row(chrom, s, e, "");
    long[] r = fi.records.get(i);
    long lo = FastaIndex.byteAt(r[1], r[2], r[3], s);
    long hi = FastaIndex.byteAt(r[1], r[2], r[3], e - 1) + 1;
    byte[] raw = new byte[(int) (hi - lo)];
    int got;
    if (d.compression.equals("bgzf")) {
      stream.seek(fi.virtualOf(lo));
      got = stream.readFully(raw, 0, raw.length) ? raw.length : -1;
    } else {
      got = in.read(lo, raw, 0, raw.length);
    }
    int n = 0;
    boolean header = false;
    for (int k = 0; k < Math.max(got, 0); k++) {
      byte c = raw[k];
      if (c == '\n' || c == '\r') continue;
      if (c == '>') header = true;
      raw[n++] = c;
    }
    if (n != e - s || header) {
      throw new Bad(fi.index + " line " + r[4] + ": bases " + s + "-" + e + " of " + chrom + " are not where the "
          + "index says in " + d.path + "; the index does not belong to this file", -1);
    }
    return new GenericInternalRow(new Object[] {UTF8String.fromString(chrom), s, e, UTF8String.fromBytes(raw, 0, n)});
  }

  private static InternalRow row(String chrom, long s, long e, String seq) {
    return new GenericInternalRow(new Object[] {UTF8String.fromString(chrom), s, e, UTF8String.fromString(seq)});
  }

  private InternalRow whole() throws IOException {
    while (ready.isEmpty() && !ended) {
      if (lines == null) lines = new TextLines(stream, 0, Long.MAX_VALUE, true);
      if (!lines.next()) {
        ended = true;
        if (name != null) take(true);
        break;
      }
      position = lines.start();
      byte[] b = lines.bytes();
      int off = lines.off(), len = lines.len();
      if (len > 0 && b[off] == '>') {
        if (name != null) take(true);
        int e = off + 1;
        while (e < off + len && b[e] != ' ' && b[e] != '\t') e++;
        String nm = Text.string(b, off + 1, e);  // an empty name is a name, as samtools faidx reads it
        skipping = !seen.add(nm);  // a repeated name: its first record counts, as samtools faidx keeps it
        name = skipping ? null : nm;
        bases.setLength(0);
        start = 0;
        continue;
      }
      int s = off, t = off + len;
      while (s < t && (b[s] == ' ' || b[s] == '\t')) s++;
      while (t > s && (b[t - 1] == ' ' || b[t - 1] == '\t')) t--;
      if (s == t || skipping) continue;
      if (name == null) throw new Bad("sequence before the first '>' header");
      bases.append(Text.string(b, s, t));
      if (bases.length() >= chunkSize) take(false);
    }
    return ready.poll();
  }

  /** Full chunks of the buffered bases, and at a record's end the rest (a record without bases is one row). */
  private void take(boolean last) {
    int cut = 0;
    while (bases.length() - cut >= chunkSize) {
      ready.add(row(name, start, start + chunkSize, bases.substring(cut, (int) (cut + chunkSize))));
      start += chunkSize;
      cut += (int) chunkSize;
      records++;
    }
    String rest = bases.substring(cut);
    bases.setLength(0);
    if (last && (!rest.isEmpty() || start == 0)) {
      ready.add(row(name, start, start + rest.length(), rest));
      records++;
    } else {
      bases.append(rest);
    }
  }
}
