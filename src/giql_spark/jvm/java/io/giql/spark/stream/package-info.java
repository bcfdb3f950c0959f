/**
 * The stream-stream interval and band join: a stateful operator on Spark's
 * {@code flatMapGroupsWithState}, rows typed as Spark rows of any schema, state in Spark's
 * state store.
 *
 * <p>The union of both sides (built in Python, see {@code giql_spark.streaming.jvm_state}) is
 * a bucket and a payload per row: the bytes of one Spark row of its tags, the row as the
 * statement reads it and the row the condition reads, so the encoders of
 * {@code flatMapGroupsWithState} copy one binary value instead of building an object per field.
 * A bucket holds units, each a (key, position range) with each side's held rows sorted by
 * their prune column. {@link Ticks} copies a row into the further ranges it crosses and makes
 * every bucket see every batch and each key's progress; {@link BucketJoin} probes, holds and
 * prunes, and keeps its state as bytes of its own layout; {@link HullSweep} finds the pairs
 * whose hulls share a point; {@link Exact} evaluates the join condition on each of them,
 * through a {@link Cond} view of each row.
 */
package io.giql.spark.stream;
