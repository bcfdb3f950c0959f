package io.giql.spark.files;

import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.util.SerializableConfiguration;

/**
 * A Hadoop configuration broadcast once for the readers' tasks: serialized into each task it is a
 * thousand settings deserialized by every task (10 to 20 ms each, a tenth of a small split's
 * time); broadcast, an executor reads it once. Kept per content, so that the queries of a
 * session that read alike share one broadcast; a changed setting makes a new one.
 */
public final class Confs {
  private static final int KEPT = 8;
  private static final Map<Long, Broadcast<SerializableConfiguration>> MADE =
      new LinkedHashMap<>(KEPT, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Broadcast<SerializableConfiguration>> e) {
          return size() > KEPT;
        }
      };

  private Confs() {}

  /** A 64-bit digest of the configuration's settings, whatever their order. */
  static long digest(Configuration conf) {
    long sum = conf.size();
    for (Map.Entry<String, String> e : conf) {
      long h = (long) e.getKey().hashCode() * 0x9E3779B97F4A7C15L + String.valueOf(e.getValue()).hashCode();
      h ^= h >>> 31;
      h *= 0xBF58476D1CE4E5B9L;
      sum += h ^ (h >>> 29);
    }
    return sum;
  }

  public static Broadcast<SerializableConfiguration> broadcast(Configuration conf) {
    long key = digest(conf);
    synchronized (MADE) {
      Broadcast<SerializableConfiguration> b = MADE.get(key);
      if (b != null) return b;
      JavaSparkContext sc = JavaSparkContext.fromSparkContext(SparkSession.active().sparkContext());
      b = sc.broadcast(new SerializableConfiguration(conf));
      MADE.put(key, b);
      return b;
    }
  }
}
