package io.giql.spark.genomic;

import java.io.IOException;
import java.util.Map;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

import io.giql.spark.compat.Scala;
import io.giql.spark.compat.Sessions;

/**
 * The data source {@code giql-genomic}: {@code spark.read.format("giql-genomic").option("path",
 * p).option("format", "vcf").load()} reads a VCF, GFF3, GTF, SAM or BAM file at any URI the
 * session's Hadoop file systems open. Options: {@code path}, {@code format} (vcf, gff, gtf, sam,
 * bam), {@code index} (when it is not next to the file), {@code samples} (VCF: "*" or
 * tab-separated names), {@code attribute_defs} / {@code tag_defs} ("name\ttype" lines; found in
 * the first {@code scan_rows} records otherwise), {@code split_bytes} (default the session's
 * {@code spark.sql.files.maxPartitionBytes}), {@code check} ("true": one string column
 * {@code error}, at most a row per split, the message of its first bad record).
 */
public final class GenomicSource implements TableProvider, DataSourceRegister {
  public static final String NAME = "giql-genomic";
  static final StructType CHECK = new StructType(new StructField[] {
      new StructField("error", DataTypes.StringType, true, org.apache.spark.sql.types.Metadata.empty())});

  @Override
  public String shortName() {
    return NAME;
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    Options o = new Options(options);
    return o.check ? CHECK : describe(o, options).schema;
  }

  @Override
  public boolean supportsExternalMetadata() {
    return true;
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    CaseInsensitiveStringMap options = new CaseInsensitiveStringMap(properties);
    Options o = new Options(options);
    return new GenomicTable(describe(o, options), o, schema, options);
  }

  /**
   * A split's bytes as Spark's file sources size them: at most {@code maxPartitionBytes}, and
   * smaller for a small file, so that every core gets a split ({@code bytes / defaultParallelism},
   * but not below {@code openCostInBytes}).
   */
  static long splitBytes(long bytes) {
    SparkSession s = SparkSession.active();
    org.apache.spark.sql.internal.SQLConf c = Sessions.classic(s).sessionState().conf();
    int cores = Math.max(1, s.sparkContext().defaultParallelism());
    long perCore = (bytes + cores - 1) / cores;
    return Math.min(c.filesMaxPartitionBytes(), Math.max(c.filesOpenCostInBytes(), perCore));
  }

  static Configuration conf(Map<String, String> options) {
    SparkSession s = SparkSession.active();
    return Sessions.classic(s).sessionState().newHadoopConfWithOptions(Scala.map(options));
  }

  static Described describe(Options o, Map<String, String> options) {
    try {
      return Described.of(o, conf(options));
    } catch (Bad e) {
      throw new IllegalArgumentException(e.headerLine > 0 ? o.path + " header line " + e.headerLine + ": " + e.getMessage()
          : o.path + ": " + e.getMessage());
    } catch (IOException e) {
      throw new IllegalArgumentException(o.path + ": " + Sources.reason(e));
    }
  }

  static final class GenomicTable implements SupportsRead {
    private final Described described;
    private final Options options;
    private final StructType schema;
    private final CaseInsensitiveStringMap raw;

    GenomicTable(Described described, Options options, StructType schema, CaseInsensitiveStringMap raw) {
      this.described = described;
      this.options = options;
      this.schema = schema;
      this.raw = raw;
    }

    @Override
    public String name() {
      return NAME + " " + described.path;
    }

    @Override
    public StructType schema() {
      return schema;
    }

    @Override
    public Set<TableCapability> capabilities() {
      return Set.of(TableCapability.BATCH_READ);
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap o) {
      return new GenomicScan.Builder(described, options, schema, conf(raw), splitBytes(described.length));
    }
  }
}
