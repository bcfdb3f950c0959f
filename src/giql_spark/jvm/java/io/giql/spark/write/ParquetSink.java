package io.giql.spark.write;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.util.SerializableConfiguration;

import io.giql.spark.compat.Sessions;

/**
 * The data source {@code giql-parquet} (write only): {@code df.write.format("giql-parquet")
 * .mode("overwrite" or "append").save(path)} writes {@code path} as a folder of Parquet part
 * files, one per task, as Spark's own Parquet writer lays them out. Options: {@code compression}
 * (default the session's {@code spark.sql.parquet.compression.codec}), {@code ifExists}
 * ({@code error}: refuse a path that exists; Spark's default save mode cannot reach a source of
 * this kind, so Session.write passes it as an option).
 */
public final class ParquetSink implements TableProvider, DataSourceRegister {
  public static final String NAME = "giql-parquet";

  @Override
  public String shortName() {
    return NAME;
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    throw new UnsupportedOperationException(
        NAME + " only writes; read its files with spark.read.parquet");
  }

  @Override
  public boolean supportsExternalMetadata() {
    return true;
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    if (partitioning.length > 0) {
      throw new IllegalArgumentException(NAME + " does not write partitioned folders (partitionBy); "
          + "use Spark's parquet format for that");
    }
    Types.columns(schema);  // refuses a type it cannot write before any task runs
    return new SinkTable(schema);
  }

  private static final class SinkTable implements SupportsWrite {
    private final StructType schema;

    SinkTable(StructType schema) {
      this.schema = schema;
    }

    @Override
    public String name() {
      return NAME;
    }

    @Override
    public StructType schema() {
      return schema;
    }

    @Override
    public Set<TableCapability> capabilities() {
      return EnumSet.of(TableCapability.BATCH_WRITE, TableCapability.TRUNCATE);
    }

    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
      return new Builder(info);
    }
  }

  private static final class Builder implements WriteBuilder, SupportsTruncate {
    private final LogicalWriteInfo info;
    private boolean truncate;

    Builder(LogicalWriteInfo info) {
      this.info = info;
    }

    @Override
    public WriteBuilder truncate() {
      truncate = true;
      return this;
    }

    @Override
    public Write build() {
      CaseInsensitiveStringMap o = info.options();
      String path = o.get("path");
      if (path == null || path.isEmpty()) {
        throw new IllegalArgumentException(NAME + " needs a path: df.write.format(\"" + NAME + "\").save(path)");
      }
      var session = Sessions.classic(SparkSession.active());
      String codec = o.getOrDefault("compression",
          session.conf().get("spark.sql.parquet.compression.codec", "snappy"));
      Codec.of(codec);  // refuses an unknown codec on the driver
      SinkSpec spec = new SinkSpec(path, UUID.randomUUID().toString(), info.schema(), codec,
          o.getOrDefault("createdBy", "giql-spark version unknown"), session.version(),
          new SerializableConfiguration(session.sessionState().newHadoopConf()));
      boolean t = truncate;
      String ifExists = o.getOrDefault("ifExists", "append");
      return new Write() {
        @Override
        public BatchWrite toBatch() {
          return new SinkJob(spec, t, ifExists);
        }
      };
    }
  }
}
