package io.giql.spark.files;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;

import scala.Function1;
import scala.collection.Iterator;
import scala.collection.immutable.Seq;

/**
 * A file relation's reader function ({@code buildReaderWithPartitionValues}), made once for every
 * query that reads it the same way.
 *
 * <p>Making a reader broadcasts the Hadoop configuration to the executors: a thousand settings
 * serialized and stored as blocks, 10 to 20 ms of the driver's time per side of every query, in
 * which no task runs (a merge join of two tables made two, and a cluster of many cores waits on
 * them). The function depends only on the session, the format, the schemas, the pushed filters,
 * the options and the Hadoop and SQL settings, so a later query that reads with all of them
 * unchanged gets the function already made; a changed setting makes a new one. A few are kept:
 * one dropped becomes garbage with its broadcast, which Spark's context cleaner then removes.
 */
public final class Readers {
  private static final int KEPT = 16;
  private static final java.util.Set<String> PATHS = java.util.Set.of("path", "paths");

  private static final Map<List<Object>, Function1<PartitionedFile, Iterator<InternalRow>>> MADE =
      new LinkedHashMap<>(KEPT, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(
            Map.Entry<List<Object>, Function1<PartitionedFile, Iterator<InternalRow>>> e) {
          return size() > KEPT;
        }
      };

  private static long made;

  private Readers() {}

  /** How many readers have been made in this JVM (tests: a query that reads alike makes none). */
  public static synchronized long made() {
    return made;
  }

  /** {@code rel}'s reader of {@code required} with {@code pushed}, {@code options} and {@code conf}. */
  public static Function1<PartitionedFile, Iterator<InternalRow>> of(HadoopFsRelation rel,
      StructType required, Seq<Filter> pushed,
      scala.collection.immutable.Map<String, String> options, Configuration conf) {
    SparkSession session = rel.sparkSession();
    SparkContext sc = session.sparkContext();
    // the settings by value; the session and its context by identity (a stopped context's
    // broadcasts are gone, and another session may read the same tables differently)
    List<Object> key = Arrays.asList(sc.applicationId(), sc.startTime(),
        System.identityHashCode(session), System.identityHashCode(sc), rel.fileFormat().getClass(),
        rel.fileFormat().toString(), rel.dataSchema(), rel.partitionSchema(), required, pushed,
        settings(options), settings(conf), SQLConf.get().getAllConfs());
    synchronized (MADE) {
      Function1<PartitionedFile, Iterator<InternalRow>> hit = MADE.get(key);
      if (hit != null && !sc.isStopped()) return hit;
    }
    Function1<PartitionedFile, Iterator<InternalRow>> reader =
        rel.fileFormat().buildReaderWithPartitionValues(session, rel.dataSchema(),
            rel.partitionSchema(), required, pushed, options, conf);
    synchronized (MADE) {
      MADE.put(key, reader);
    }
    synchronized (Readers.class) {
      made++;
    }
    return reader;
  }

  /**
   * The settings without the table's own path, which the options (and so the Hadoop settings
   * made from them) carry but the reader never reads (each file comes to it with its path):
   * tables of one schema at other paths share a reader.
   */
  private static Map<String, String> settings(Iterable<Map.Entry<String, String>> entries) {
    Map<String, String> out = new TreeMap<>();
    for (Map.Entry<String, String> e : entries) {
      if (!PATHS.contains(e.getKey())) out.put(e.getKey(), e.getValue());
    }
    return out;
  }

  private static Map<String, String> settings(
      scala.collection.immutable.Map<String, String> options) {
    Map<String, String> out = new TreeMap<>();
    for (scala.Tuple2<String, String> e : io.giql.spark.compat.Scala.list(options.toSeq())) {
      if (!PATHS.contains(e._1())) out.put(e._1(), e._2());
    }
    return out;
  }
}
