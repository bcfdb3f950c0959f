package io.giql.spark.write;

import java.io.IOException;
import java.util.Arrays;

import org.apache.parquet.format.ColumnChunk;
import org.apache.parquet.format.FieldRepetitionType;
import org.apache.parquet.format.SchemaElement;
import org.apache.parquet.format.Statistics;
import org.apache.parquet.format.Type;
import org.apache.spark.sql.catalyst.InternalRow;

import io.giql.spark.compat.UserErrors;

/**
 * A row group's values of one column, held in primitive arrays by row (a NULL row holds a
 * filler) until the group is written as one column chunk.
 */
abstract class Column {
  /** Rows a page holds at most, and the bytes of values it holds about at most. */
  static final int PAGE_ROWS = 1 << 16;
  static final int PAGE_BYTES = 1 << 20;

  final String name;
  final boolean optional;
  final Type type;
  int rows;
  int nulls;
  private boolean[] isNull = new boolean[0];
  private int[] levels = new int[0];

  Column(String name, boolean optional, Type type) {
    this.name = name;
    this.optional = optional;
    this.type = type;
  }

  final void add(InternalRow row, int ord) {
    if (rows == capacity()) {
      int grown = Math.max(1024, rows * 2);
      grow(grown);
      if (optional) {
        isNull = Arrays.copyOf(isNull, grown);
      }
    }
    if (row.isNullAt(ord)) {
      if (!optional) {
        throw UserErrors.raised("giql-parquet: column '" + name
            + "' is declared NOT NULL but a row holds NULL");
      }
      isNull[rows] = true;
      nulls++;
      nullAt(rows);
    } else {
      if (optional) {
        isNull[rows] = false;
      }
      set(row, ord, rows);
    }
    rows++;
  }

  final boolean isNull(int at) {
    return optional && isNull[at];
  }

  /** Which rows are NULL, or null when none of this group's is (the loops then skip the test). */
  final boolean[] nullRows() {
    return nulls == 0 ? null : isNull;
  }

  void reset() {
    rows = 0;
    nulls = 0;
  }

  /** The schema element of this column in the footer. */
  SchemaElement element() {
    SchemaElement e = new SchemaElement(name);
    e.setType(type);
    e.setRepetition_type(optional ? FieldRepetitionType.OPTIONAL : FieldRepetitionType.REQUIRED);
    annotate(e);
    return e;
  }

  /** Writes the buffered rows as one column chunk. */
  ColumnChunk write(Chunk c) throws IOException {
    beforePages(c);
    for (int from = 0, to; from < rows; from = to) {
      to = pageEnd(from);
      c.body.clear();
      if (optional) {
        levels(c.body, from, to);
      }
      values(c.body, from, to);
      c.dataPage(to - from);
    }
    Statistics s = new Statistics();
    s.setNull_count(nulls);
    if (nulls < rows) {
      minMax(s);
    }
    return c.finish(type, name, rows, s);
  }

  /** Definition levels of rows [from, to) as a V1 page holds them: a length, then the hybrid. */
  private void levels(Bytes to, int from, int end) throws IOException {
    int at = to.len;
    to.putInt(0);
    int n = end - from;
    boolean any = false;
    for (int i = from; i < end && !any; i++) {
      any = isNull[i];
    }
    if (!any) {  // the usual page: one run of n ones
      varint(to, n << 1);
      to.put((byte) 1);
    } else {
      if (levels.length < n) {
        levels = new int[n];
      }
      for (int i = 0; i < n; i++) {
        levels[i] = isNull[from + i] ? 0 : 1;
      }
      Chunk.hybrid(to, levels, 0, n, 1);
    }
    to.setInt(at, to.len - at - 4);
  }

  static void varint(Bytes to, int v) {
    while ((v & ~0x7F) != 0) {
      to.put((byte) ((v & 0x7F) | 0x80));
      v >>>= 7;
    }
    to.put((byte) v);
  }

  /** Where the page starting at row {@code from} ends. */
  int pageEnd(int from) {
    return Math.min(rows, from + Math.min(PAGE_ROWS, PAGE_BYTES / width()));
  }

  /** The bytes one value takes in a page (an estimate for strings). */
  abstract int width();

  /** About the bytes this column holds now, for when to end a row group. */
  long bytes() {
    return (long) rows * width();
  }

  abstract int capacity();

  abstract void grow(int capacity);

  abstract void set(InternalRow row, int ord, int at);

  void nullAt(int at) {}

  void annotate(SchemaElement e) {}

  void beforePages(Chunk c) throws IOException {}

  /** The non-NULL values of rows [from, to), encoded. */
  abstract void values(Bytes to, int from, int end) throws IOException;

  /** Sets min and max over the non-NULL values (there is at least one). */
  abstract void minMax(Statistics s);
}
