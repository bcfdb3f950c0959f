package io.giql.spark.join.merge;

import java.io.Serializable;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StringType;

import scala.Function1;
import scala.collection.Iterator;
import scala.collection.immutable.Seq;

/** How one side is read and turned into (key, lo, hi, row). All expressions are bound. */
public final class SideSpec implements Serializable {
  private static final long serialVersionUID = 1L;
  final String name;
  final Function1<PartitionedFile, Iterator<InternalRow>> reader;
  final Expression filter;       // over the scan row, or null
  final Seq<Expression> project; // scan row -> side row
  final Expression key;          // over the side row
  final Expression lo;
  final Expression hi;
  final boolean stringKey;
  final DataType[] sideTypes;

  public SideSpec(String name, Function1<PartitionedFile, Iterator<InternalRow>> reader,
      Expression filter, Seq<Expression> project, Expression key, Expression lo, Expression hi,
      DataType[] sideTypes) {
    this.name = name;
    this.reader = reader;
    this.filter = filter;
    this.project = project;
    this.key = key;
    this.lo = lo;
    this.hi = hi;
    this.stringKey = key.dataType() instanceof StringType;
    this.sideTypes = sideTypes;
  }
}
