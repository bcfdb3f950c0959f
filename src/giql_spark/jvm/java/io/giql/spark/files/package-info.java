/**
 * How giql-spark's operators read files: a relation's reader made once for the queries that read
 * it alike ({@link Readers}), and the local file system of giql-spark's embedded Spark
 * ({@code giql_spark.session.local_spark}).
 *
 * <p>Without Hadoop's native library (a pip-installed PySpark has none) Hadoop's local file
 * system sets each new file's permissions by running {@code chmod} in a child process, and
 * Hadoop's {@code FileContext} resolves every rename's paths by running {@code readlink}. A
 * stream's micro-batch writes and renames dozens of small files (offsets, commits, the state
 * store's changelogs), each process costs about 5 ms, and the stream's own thread waits for
 * them. {@link LocalFiles} sets permissions through {@code java.nio} instead; the embedded Spark
 * also names Spark's {@code FileSystem}-based checkpoint manager, whose renames do not resolve
 * links.
 */
package io.giql.spark.files;
