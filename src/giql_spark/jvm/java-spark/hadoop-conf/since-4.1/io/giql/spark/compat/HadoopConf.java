package io.giql.spark.compat;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;

/** The Hadoop configuration a file relation's reader uses. */
public final class HadoopConf {
  private HadoopConf() {}

  public static Configuration of(HadoopFsRelation rel) {
    return rel.getHadoopConf(rel.sparkSession(), rel.options());
  }
}
