package io.giql.spark.join.merge;

import java.io.IOException;
import java.util.ArrayList;

import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Ascending$;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.InterpretedOrdering;
import org.apache.spark.sql.catalyst.expressions.NullsFirst$;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.execution.UnsafeExternalRowSorter;
import org.apache.spark.sql.types.BooleanType$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.IntegerType$;
import org.apache.spark.sql.types.LongType$;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.collection.unsafe.sort.PrefixComparators;

import io.giql.spark.compat.Scala;

import scala.collection.Iterator;

/** A side of a unit read again in full and sorted by (rank, lo, ord). */
final class SortedStream implements RowStream {
  private final Iterator<InternalRow> sorted;
  private final UnsafeExternalRowSorter sorter;
  private final int fields;

  SortedStream(FileStream source, SideSpec spec) throws IOException {
    // [rank, lo, hi, ord, nullBound, side row as a struct]
    StructType sideType = new StructType();
    for (int i = 0; i < spec.sideTypes.length; i++) {
      sideType = sideType.add(new StructField("c" + i, spec.sideTypes[i], true,
          Metadata.empty()));
    }
    StructType schema = new StructType(new StructField[] {
        new StructField("rank", IntegerType$.MODULE$, false, Metadata.empty()),
        new StructField("lo", LongType$.MODULE$, false, Metadata.empty()),
        new StructField("hi", LongType$.MODULE$, false, Metadata.empty()),
        new StructField("ord", LongType$.MODULE$, false, Metadata.empty()),
        new StructField("nb", BooleanType$.MODULE$, false, Metadata.empty()),
        new StructField("row", sideType, false, Metadata.empty())});
    java.util.List<SortOrder> order = new java.util.ArrayList<>();
    order.add(new SortOrder(new BoundReference(0, IntegerType$.MODULE$, false),
        Ascending$.MODULE$, NullsFirst$.MODULE$, Scala.seqOf()));
    order.add(new SortOrder(new BoundReference(1, LongType$.MODULE$, false),
        Ascending$.MODULE$, NullsFirst$.MODULE$, Scala.seqOf()));
    order.add(new SortOrder(new BoundReference(3, LongType$.MODULE$, false),
        Ascending$.MODULE$, NullsFirst$.MODULE$, Scala.seqOf()));
    sorter = UnsafeExternalRowSorter.create(schema, new InterpretedOrdering(Scala.seq(order)),
        PrefixComparators.LONG, new UnsafeExternalRowSorter.PrefixComputer() {
          private final Prefix p = new Prefix();

          @Override
          public Prefix computePrefix(InternalRow row) {
            p.value = row.getInt(0);
            p.isNull = false;
            return p;
          }
        }, SparkEnv.get().memoryManager().pageSizeBytes(), false);
    UnsafeProjection pack = UnsafeProjection.create(new DataType[] {IntegerType$.MODULE$,
        LongType$.MODULE$, LongType$.MODULE$, LongType$.MODULE$, BooleanType$.MODULE$,
        sideType});
    this.fields = spec.sideTypes.length;
    GenericInternalRow g = new GenericInternalRow(6);
    SweepRow e;
    while ((e = source.next()) != null) {
      g.setInt(0, e.rank);
      g.setLong(1, e.lo);
      g.setLong(2, e.hi);
      g.setLong(3, e.ord);
      g.setBoolean(4, e.nullBound);
      g.update(5, e.row);
      sorter.insertRow(pack.apply(g));
    }
    sorted = sorter.sort();
    TaskContext tc = TaskContext.get();
    if (tc != null) {
      tc.addTaskCompletionListener(new org.apache.spark.util.TaskCompletionListener() {
        @Override
        public void onTaskCompletion(TaskContext context) {
          sorter.cleanupResources();
        }
      });
    }
  }

  @Override
  public SweepRow next() {
    if (!sorted.hasNext()) return null;
    InternalRow r = sorted.next();
    UnsafeRow row = (UnsafeRow) r.getStruct(5, fields);
    return new SweepRow(r.getInt(0), r.getLong(1), r.getLong(2), r.getLong(3), row.copy(),
        r.getBoolean(4));
  }
}
