package io.giql.spark;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.hadoop.Footer;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat$;
import org.apache.spark.sql.types.StructType;

import io.giql.spark.compat.Scala;

import scala.Option;

/**
 * The schema {@code spark.read.parquet(path)} would infer, read from one footer on the driver.
 *
 * <p>Spark infers a Parquet schema (without schema merging) from the first data file's footer, but
 * reads that footer in a Spark job: a job per registered file, which is most of the cost of
 * registering a small table. This reads the same footer here and converts it with Spark's own
 * converter ({@code ParquetFileFormat.readSchema}, which prefers the Spark schema stored in the
 * footer, as inference does), so the caller can pass the schema and skip the job.
 *
 * <p>Only the layouts whose inference is plain are answered: a single file, or a folder of data
 * files with no subfolder (no partition columns to discover) and no summary file. Everything else,
 * and schema merging, returns null and the caller lets Spark infer.
 */
public final class ParquetSchemas {
  private ParquetSchemas() {}

  /** The schema as JSON, or null when Spark must infer it itself. */
  public static String infer(SparkSession session, String path) throws IOException {
    if (Boolean.parseBoolean(session.conf().get("spark.sql.parquet.mergeSchema", "false"))) {
      return null;
    }
    Configuration conf = session.sessionState().newHadoopConf();
    Path p = new Path(path);
    FileSystem fs = p.getFileSystem(conf);
    FileStatus status = fs.getFileStatus(p);
    FileStatus file;
    if (status.isFile()) {
      file = status;
    } else {
      List<FileStatus> data = new ArrayList<>();
      for (FileStatus s : fs.listStatus(p)) {
        String name = s.getPath().getName();
        if (s.isDirectory()) return null; // partition discovery: Spark's business
        if (name.startsWith("_") || name.startsWith(".")) {
          if (name.equals("_metadata") || name.equals("_common_metadata")) return null;
          continue; // _SUCCESS, .crc files: Spark skips them too
        }
        data.add(s);
      }
      if (data.isEmpty()) return null;
      data.sort(Comparator.comparing(s -> s.getPath().getName()));
      file = data.get(0);
    }
    ParquetMetadata footer;
    try (ParquetFileReader reader = ParquetFileReader.open(HadoopInputFile.fromStatus(file, conf))) {
      footer = reader.getFooter();
    }
    Option<StructType> schema = ParquetFileFormat$.MODULE$.readSchema(
        Scala.seq(Arrays.asList(new Footer(file.getPath(), footer))), session);
    return schema.isDefined() ? schema.get().json() : null;
  }
}
