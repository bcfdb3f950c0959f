package io.giql.spark.genomic;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;

/**
 * A tabix (.tbi), CSI (.csi) or BAM (.bai) index, read for two things: the chunks of virtual
 * offsets that can hold records of a region (the binning scheme of the SAM specification, section
 * 5, for any min_shift and depth), and the record offsets of its linear index, where a BAM can be
 * cut into splits.
 */
final class IndexChunks {
  private final int minShift;
  private final int depth;
  private final Map<String, Integer> names = new HashMap<>();
  private final List<Map<Integer, long[]>> bins = new ArrayList<>();   // per reference: bin -> chunk pairs
  private final List<Map<Integer, Long>> binOffsets = new ArrayList<>();  // CSI: bin -> loffset
  private final List<long[]> linear = new ArrayList<>();               // TBI/BAI: per 16 kb window

  private IndexChunks(int minShift, int depth) {
    this.minShift = minShift;
    this.depth = depth;
  }

  private static final int KEPT = 8;
  private static final Map<List<Object>, IndexChunks> READ = new java.util.LinkedHashMap<>(KEPT, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<List<Object>, IndexChunks> e) {
      return size() > KEPT;
    }
  };

  /**
   * {@code index} read (or the one read for an earlier query, while the file is unchanged: a BAM's
   * .bai is megabytes, and a query plans its splits from it); {@code references}: the file's
   * names in order, where the index stores none.
   */
  static IndexChunks read(String index, Configuration conf, List<String> references) throws IOException {
    org.apache.hadoop.fs.Path p = new org.apache.hadoop.fs.Path(index);
    org.apache.hadoop.fs.FileStatus st = p.getFileSystem(conf).getFileStatus(p);
    List<Object> key = List.of(index, st.getLen(), st.getModificationTime(), references);
    synchronized (READ) {
      IndexChunks found = READ.get(key);
      if (found != null) return found;
    }
    IndexChunks ix = parse(index, conf, references);
    synchronized (READ) {
      READ.put(key, ix);
    }
    return ix;
  }

  private static IndexChunks parse(String index, Configuration conf, List<String> references) throws IOException {
    byte[] raw;
    try (Input in = new Input(index, conf)) {
      raw = new byte[(int) Math.min(in.length, Integer.MAX_VALUE - 16)];
      in.readFully(0, raw, 0, raw.length);
      if (Described.sniff(in).equals("bgzf")) raw = inflateAll(in);
    }
    ByteBuffer b = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
    byte[] magic = new byte[4];
    b.get(magic);
    String m = new String(magic, StandardCharsets.ISO_8859_1);
    IndexChunks ix;
    List<String> stored = new ArrayList<>();
    int nRef;
    boolean csi = false;
    if (m.equals("TBI\1")) {
      nRef = b.getInt();
      b.getInt(); b.getInt(); b.getInt(); b.getInt(); b.getInt(); b.getInt();  // format, cols, meta, skip
      int lNm = b.getInt();
      byte[] nm = new byte[lNm];
      b.get(nm);
      for (String s : new String(nm, StandardCharsets.UTF_8).split("\0")) if (!s.isEmpty()) stored.add(s);
      ix = new IndexChunks(14, 5);
    } else if (m.equals("BAI\1")) {
      nRef = b.getInt();
      ix = new IndexChunks(14, 5);
    } else if (m.equals("CSI\1")) {
      csi = true;
      int minShift = b.getInt();
      int depth = b.getInt();
      int lAux = b.getInt();
      byte[] aux = new byte[lAux];
      b.get(aux);
      if (lAux >= 28) {
        ByteBuffer a = ByteBuffer.wrap(aux).order(ByteOrder.LITTLE_ENDIAN);
        a.position(24);
        int lNm = a.getInt();
        if (lNm > 0 && 28 + lNm <= lAux) {
          byte[] nm = new byte[lNm];
          a.get(nm);
          for (String s : new String(nm, StandardCharsets.UTF_8).split("\0")) if (!s.isEmpty()) stored.add(s);
        }
      }
      nRef = b.getInt();
      ix = new IndexChunks(minShift, depth);
    } else {
      throw new Bad(index + ": not a .tbi, .csi or .bai index");
    }
    List<String> refNames = stored.isEmpty() ? references : stored;
    int pseudo = ((1 << ((ix.depth + 1) * 3)) - 1) / 7 + 1;
    for (int r = 0; r < nRef; r++) {
      Map<Integer, long[]> rb = new HashMap<>();
      Map<Integer, Long> ro = new HashMap<>();
      int nBin = b.getInt();
      for (int i = 0; i < nBin; i++) {
        int bin = b.getInt();
        long loff = csi ? b.getLong() : 0;
        int nChunk = b.getInt();
        long[] chunks = new long[2 * nChunk];
        for (int c = 0; c < 2 * nChunk; c++) chunks[c] = b.getLong();
        if (bin == pseudo) continue;  // metadata, not records
        rb.put(bin, chunks);
        if (csi) ro.put(bin, loff);
      }
      long[] lin = new long[0];
      if (!csi) {
        int nIntv = b.getInt();
        lin = new long[nIntv];
        for (int i = 0; i < nIntv; i++) lin[i] = b.getLong();
      }
      ix.bins.add(rb);
      ix.binOffsets.add(ro);
      ix.linear.add(lin);
      if (r < refNames.size()) ix.names.put(refNames.get(r), r);
    }
    return ix;
  }

  private static byte[] inflateAll(Input in) throws IOException {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    try (Bgzf z = new Bgzf(in)) {
      while (z.refill()) out.write(z.buf, 0, z.lim);
    }
    return out.toByteArray();
  }

  /** The largest position (0-based, exclusive) the binning scheme holds. */
  long span() {
    return 1L << (minShift + 3 * depth);
  }

  boolean has(String reference) {
    return names.containsKey(reference);
  }

  /**
   * The chunks (virtual offset pairs, merged, in file order) that can hold the records of
   * {@code reference} overlapping the 0-based half-open {@code [beg, end)}.
   */
  List<long[]> chunks(String reference, long beg, long end) {
    List<long[]> out = new ArrayList<>();
    Integer r = names.get(reference);
    if (r == null) return out;
    beg = Math.max(0, beg);
    end = Math.min(end, span());
    if (beg >= end) return out;
    Map<Integer, long[]> rb = bins.get(r);
    long minOffset = 0;
    long[] lin = linear.get(r);
    if (lin.length > 0) {
      int w = (int) Math.min(beg >> 14, lin.length - 1);
      minOffset = lin[w];
    }
    List<long[]> found = new ArrayList<>();
    int t = 0;
    for (int l = 0, s = minShift + depth * 3; l <= depth; s -= 3, t += 1 << (l * 3), l++) {
      long b0 = t + (beg >> s);
      long e0 = t + ((end - 1) >> s);
      for (long bin = b0; bin <= e0; bin++) {
        long[] c = rb.get((int) bin);
        if (c == null) continue;
        long binMin = minOffset;
        if (!binOffsets.get(r).isEmpty() && l == depth) binMin = Math.max(binMin, binOffsets.get(r).getOrDefault((int) bin, 0L));
        for (int i = 0; i < c.length; i += 2) {
          if (c[i + 1] > binMin) found.add(new long[] {Math.max(c[i], 0), c[i + 1]});
        }
      }
    }
    found.sort((x, y) -> Long.compare(x[0], y[0]));
    for (long[] c : found) {
      long[] last = out.isEmpty() ? null : out.get(out.size() - 1);
      if (last != null && c[0] <= last[1]) {
        last[1] = Math.max(last[1], c[1]);
      } else {
        out.add(new long[] {c[0], c[1]});
      }
    }
    return out;
  }

  private long[] offsets;

  /** Every record offset the index knows (its linear index's and its chunks' starts), ascending, distinct. */
  synchronized long[] recordOffsets() {
    if (offsets != null) return offsets;
    int n = 0;
    for (long[] lin : linear) n += lin.length;
    for (Map<Integer, long[]> rb : bins) for (long[] c : rb.values()) n += c.length / 2;
    long[] all = new long[n];
    int k = 0;
    for (long[] lin : linear) for (long v : lin) all[k++] = v;
    for (Map<Integer, long[]> rb : bins) for (long[] c : rb.values()) for (int i = 0; i < c.length; i += 2) all[k++] = c[i];
    java.util.Arrays.sort(all);
    int m = 0;
    for (long v : all) if (v > 0 && (m == 0 || all[m - 1] != v)) all[m++] = v;
    offsets = java.util.Arrays.copyOf(all, m);
    return offsets;
  }
}
