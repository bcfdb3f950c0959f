package io.giql.spark.write;

import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/** Which Spark types the writer takes, and the column that buffers each. */
final class Types {
  private Types() {}

  static final String ACCEPTED = "boolean, tinyint, smallint, int, bigint, float, double, string, date";

  static Column column(StructField f) {
    DataType t = f.dataType();
    String n = f.name();
    boolean opt = f.nullable();
    if (t instanceof LongType) {
      return new Numbers.Longs(n, opt);
    }
    if (t instanceof IntegerType) {
      return new Numbers.Ints(n, opt, Numbers.Ints.Kind.INT);
    }
    if (t instanceof ShortType) {
      return new Numbers.Ints(n, opt, Numbers.Ints.Kind.SHORT);
    }
    if (t instanceof ByteType) {
      return new Numbers.Ints(n, opt, Numbers.Ints.Kind.BYTE);
    }
    if (t instanceof DateType) {
      return new Numbers.Ints(n, opt, Numbers.Ints.Kind.DATE);
    }
    if (t instanceof DoubleType) {
      return new Numbers.Doubles(n, opt, false);
    }
    if (t instanceof FloatType) {
      return new Numbers.Doubles(n, opt, true);
    }
    if (t instanceof BooleanType) {
      return new Numbers.Booleans(n, opt);
    }
    if (t instanceof StringType) {
      return new Strings(n, opt);
    }
    throw new IllegalArgumentException("giql-parquet cannot write column '" + n + "' of type "
        + t.simpleString() + "; it writes " + ACCEPTED);
  }

  static Column[] columns(StructType schema) {
    StructField[] fs = schema.fields();
    Column[] out = new Column[fs.length];
    for (int i = 0; i < fs.length; i++) {
      out[i] = column(fs[i]);
    }
    return out;
  }
}
