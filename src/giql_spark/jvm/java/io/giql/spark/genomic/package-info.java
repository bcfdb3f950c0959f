/**
 * Genomic files read inside Spark's JVM: VCF, GFF3/GTF and SAM as text (plain, gzip or BGZF) and
 * BAM, through Hadoop's {@code FileSystem}, so any file system the cluster's Spark reads
 * ({@code hdfs://}, {@code s3a://}, {@code abfss://}, {@code gs://}, {@code viewfs://}, local
 * files) is read with the cluster's own configuration and credentials.
 *
 * <p>A file is cut into splits of about {@code spark.sql.files.maxPartitionBytes} of its bytes:
 * a BGZF file at block boundaries (its index is not needed), a plain text file at byte offsets, a
 * BAM at the record offsets of its {@code .bai}; only a plain gzip file, which cannot be entered
 * in the middle, is read by one task. A split owns the records that start inside it, so a record
 * that straddles a split's end is read once, by the split it starts in ({@link TextLines}).
 * A query's region (a chromosome and bounds on start and end, pushed down by Spark) is read
 * through the file's index (.tbi, .csi, .bai) where there is one: only the index's chunks that
 * can hold such records are decompressed ({@link IndexChunks}). Only the columns a query reads
 * are parsed.
 *
 * <p>Positions are 64-bit: a chromosome longer than 2^31 (wheat, axolotl, lungfish) reads as it is
 * written. Bad input fails with one line naming the file and line (or record), never a stack
 * trace or a wrapped number.
 */
package io.giql.spark.genomic;
