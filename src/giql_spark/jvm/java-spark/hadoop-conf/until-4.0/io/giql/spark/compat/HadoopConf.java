package io.giql.spark.compat;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;

/** The Hadoop configuration a file relation's reader uses; before 4.1, what 4.1's getHadoopConf does. */
public final class HadoopConf {
  private HadoopConf() {}

  public static Configuration of(HadoopFsRelation rel) {
    return rel.sparkSession().sessionState().newHadoopConfWithOptions(rel.options());
  }
}
