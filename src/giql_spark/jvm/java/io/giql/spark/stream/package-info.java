/**
 * The stream-stream interval and band join: a stateful operator on Spark's
 * {@code flatMapGroupsWithState}, rows typed as Spark rows of any schema, state in Spark's
 * state store.
 *
 * <p>The union of both sides (built in Python, see {@code giql_spark.streaming.jvm_state}) is
 * grouped by a bucket; a bucket holds units, each a (key, position range) with each side's
 * held rows sorted by their prune column. {@link Ticks} makes every bucket see every batch
 * and each key's progress; {@link BucketJoin} probes, holds and prunes; {@link HullSweep}
 * finds the pairs whose hulls share a point; {@link Exact} evaluates the join condition where
 * the operator must know which pairs match (outer, semi and anti joins).
 */
package io.giql.spark.stream;
