package io.giql.spark.stream;

import static io.giql.spark.stream.StreamRules.KEY;

import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.expressions.XXH64;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A row's key as a {@code String}, and its hash, made once per run of rows with the same key
 * (the rows of a bucket, and of a sorted stream, come grouped by key) rather than once per row;
 * equal keys get the same instance, so a unit can be recognised by reference.
 */
final class Keys {
  private UTF8String bytes;
  private String text;
  private long hash;
  private boolean hashed;

  String of(UnsafeRow r) {
    if (r.isNullAt(KEY)) return null;
    UTF8String b = r.getUTF8String(KEY);
    if (!b.equals(bytes)) {
      bytes = b.clone(); // b points into the row's bytes
      text = bytes.toString();
      hashed = false;
    }
    return text;
  }

  /** The hash of the row's key, which must not be NULL ({@link StreamRules#bucket} takes it). */
  long hash(UnsafeRow r) {
    of(r);
    if (!hashed) {
      hash = XXH64.hashUTF8String(bytes, StreamRules.SEED);
      hashed = true;
    }
    return hash;
  }
}
