package io.giql.spark.write;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.apache.parquet.bytes.HeapByteBufferAllocator;
import org.apache.parquet.column.values.rle.RunLengthBitPackingHybridEncoder;
import org.apache.parquet.format.ColumnChunk;
import org.apache.parquet.format.ColumnMetaData;
import org.apache.parquet.format.DataPageHeader;
import org.apache.parquet.format.DictionaryPageHeader;
import org.apache.parquet.format.Encoding;
import org.apache.parquet.format.PageHeader;
import org.apache.parquet.format.PageType;
import org.apache.parquet.format.Statistics;
import org.apache.parquet.format.Type;
import org.apache.parquet.format.Util;

/**
 * One column chunk being written: its pages (a dictionary page first, when there is one), each
 * a header and a compressed body, and then the chunk's metadata for the footer.
 */
final class Chunk {
  private final Out out;
  private final Codec codec;
  private final long start;
  private long dictionaryOffset = -1;
  private long dataOffset = -1;
  private long compressed;
  private long uncompressed;
  private boolean dictionary;
  /** A page's body before compression (levels, then values), and compressed. */
  final Bytes body;
  private final Bytes packed;

  /** {@code body} and {@code packed}: the writer's buffers, reused chunk after chunk. */
  Chunk(Out out, Codec codec, Bytes body, Bytes packed) {
    this.out = out;
    this.codec = codec;
    this.start = out.pos;
    this.body = body;
    this.packed = packed;
  }

  void dictionaryPage(Bytes values, int count) throws IOException {
    dictionaryOffset = out.pos;
    dictionary = true;
    PageHeader h = new PageHeader(PageType.DICTIONARY_PAGE, values.len, 0);
    // PLAIN_DICTIONARY, as parquet-mr's own v1 pages say: every reader takes it.
    h.setDictionary_page_header(new DictionaryPageHeader(count, Encoding.PLAIN_DICTIONARY));
    page(h, values);
  }

  /** A data page of {@code rows} values (NULLs included) from {@link #body}. */
  void dataPage(int rows) throws IOException {
    if (dataOffset < 0) {
      dataOffset = out.pos;
    }
    PageHeader h = new PageHeader(PageType.DATA_PAGE, body.len, 0);
    h.setData_page_header(new DataPageHeader(rows,
        dictionary ? Encoding.PLAIN_DICTIONARY : Encoding.PLAIN, Encoding.RLE, Encoding.RLE));
    page(h, body);
  }

  private void page(PageHeader h, Bytes raw) throws IOException {
    Bytes packed = raw;
    if (codec != Codec.UNCOMPRESSED) {
      codec.compress(raw.buf, raw.len, this.packed);
      packed = this.packed;
    }
    h.setCompressed_page_size(packed.len);
    long before = out.pos;
    Util.writePageHeader(h, out);
    long header = out.pos - before;
    out.write(packed.buf, 0, packed.len);
    compressed += header + packed.len;
    uncompressed += header + raw.len;
  }

  ColumnChunk finish(Type type, String name, long rows, Statistics stats) {
    List<Encoding> encodings = new ArrayList<>();
    encodings.add(dictionary ? Encoding.PLAIN_DICTIONARY : Encoding.PLAIN);
    encodings.add(Encoding.RLE);
    ColumnMetaData md = new ColumnMetaData(type, encodings, List.of(name), codec.thrift, rows,
        uncompressed, compressed, dataOffset);
    if (dictionaryOffset >= 0) {
      md.setDictionary_page_offset(dictionaryOffset);
    }
    md.setStatistics(stats);
    ColumnChunk c = new ColumnChunk(start);
    c.setMeta_data(md);
    return c;
  }

  /**
   * Appends {@code n} values of {@code bitWidth} bits as Parquet's RLE/bit-packed hybrid: runs of
   * one value as a run, the rest packed eight at a time (parquet-mr's own encoder).
   */
  static void hybrid(Bytes to, int[] values, int from, int n, int bitWidth) throws IOException {
    // Not try-with-resources: the encoder is AutoCloseable only from parquet 1.14 (Spark 4).
    RunLengthBitPackingHybridEncoder enc = new RunLengthBitPackingHybridEncoder(
        Math.max(1, bitWidth), 1 << 12, 1 << 20, HeapByteBufferAllocator.getInstance());
    try {
      for (int i = from; i < from + n; i++) {
        enc.writeInt(values[i]);
      }
      byte[] b = enc.toBytes().toByteArray();
      to.put(b, 0, b.length);
    } finally {
      enc.close();
    }
  }
}
