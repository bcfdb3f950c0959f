package io.giql.spark.stream;

import static io.giql.spark.stream.StreamRules.KEY;

import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A row's key as a {@code String}, made once per run of rows with the same key (the rows of a
 * bucket come grouped by key when the streams are sorted) rather than once per row; equal
 * keys get the same instance, so a unit can be recognised by reference.
 */
final class Keys {
  private UTF8String bytes;
  private String text;

  String of(UnsafeRow r) {
    if (r.isNullAt(KEY)) return null;
    UTF8String b = r.getUTF8String(KEY);
    if (!b.equals(bytes)) {
      bytes = b.clone(); // b points into the row's bytes
      text = bytes.toString();
    }
    return text;
  }
}
