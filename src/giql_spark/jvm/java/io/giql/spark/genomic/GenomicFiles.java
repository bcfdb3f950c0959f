package io.giql.spark.genomic;

import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** What Python asks of a genomic file through py4j (a classic session's driver). */
public final class GenomicFiles {
  private GenomicFiles() {}

  /**
   * The message of the file's first bad record, or null: every split read in this process, in
   * file order, each to its end or its first bad record (for a file small enough that a Spark job
   * would cost more than the reading). A bad header throws IllegalArgumentException.
   */
  public static String firstError(Map<String, String> options) throws java.io.IOException {
    CaseInsensitiveStringMap o = new CaseInsensitiveStringMap(options);
    Options opts = new Options(o);
    Described d = GenomicSource.describe(opts, o);
    Configuration conf = GenomicSource.conf(o);
    GenomicScan scan = new GenomicScan(d, opts, d.schema, new Keep(), conf, GenomicSource.splitBytes(d.length));
    for (InputPartition p : scan.planInputPartitions()) {
      try (GenomicReaders.Check c = new GenomicReaders.Check(
          GenomicReaders.open(d, d.schema, null, (GenomicPartition) p, conf, true))) {
        if (c.next()) {
          InternalRow r = c.get();
          return r.getUTF8String(0).toString();
        }
      }
    }
    return null;
  }
}
