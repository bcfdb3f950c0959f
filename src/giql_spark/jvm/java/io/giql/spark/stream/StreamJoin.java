package io.giql.spark.stream;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.optimizer.ReplaceExpressions$;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.streaming.GroupStateTimeout;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

import io.giql.spark.compat.Evaluable;
import io.giql.spark.compat.Scala;

/** The entry point Python calls: the stream-stream join of a tagged union (see the package). */
public final class StreamJoin {
  private StreamJoin() {}

  /**
   * The operator's output over {@code union}: one row per output row (kind 0: the left row and
   * the right row, either NULL for an unmatched row) and one metric row per bucket and batch
   * (kind 1). {@code conf} holds the rules as text (see {@link StreamRules}); its
   * {@code condition} is the join condition as Spark SQL over the columns of the left condition
   * row then the right one, evaluated in the operator.
   */
  public static Dataset<Row> join(Dataset<Row> union, Map<String, String> conf) {
    StructType in = union.schema();
    String payload = StreamRules.COLUMNS[StreamRules.PAYLOAD_COLUMN];
    if (!java.util.Arrays.equals(in.fieldNames(), new String[] {payload})) {
      throw new IllegalArgumentException("the union's columns are " + String.join(", ", in.fieldNames())
          + ", expected " + payload);
    }
    // The rows cross as the bytes of Spark rows (giql_row_bytes); their types come as JSON.
    StructType lt = (StructType) DataType.fromJson(conf.get("left_row_type"));
    StructType rt = (StructType) DataType.fromJson(conf.get("right_row_type"));
    StructType lc = (StructType) DataType.fromJson(conf.get("left_cond_type"));
    StructType rc = (StructType) DataType.fromJson(conf.get("right_cond_type"));
    List<StructField> both = new ArrayList<>(List.of(lc.fields()));
    both.addAll(List.of(rc.fields()));
    Dataset<Row> empty = union.sparkSession().createDataFrame(new ArrayList<Row>(),
        new StructType(both.toArray(new StructField[0])));
    // The analysed plan, with what only the optimizer turns into evaluable expressions
    // (BETWEEN and the like) replaced; not optimized further, which would fold the empty input.
    LogicalPlan plan = ReplaceExpressions$.MODULE$.apply(
        empty.select(functions.expr(conf.get("condition"))).queryExecution().analyzed());
    Project project = (Project) plan;
    Expression condition = Evaluable.of(((Alias) project.projectList().head()).child());
    List<Attribute> joined = Scala.list(project.child().output());
    StreamRules rules = new StreamRules(conf, lt, rt, lc, rc, condition, Scala.seq(joined),
        Scala.seq(joined.subList(0, lc.size())), Scala.seq(joined.subList(lc.size(), joined.size())));
    Dataset<Row> ticked = union.as(Encoders.BINARY())
        .mapPartitions(new Ticks(rules), Encoders.tuple(Encoders.LONG(), Encoders.BINARY()))
        .toDF(StreamRules.COLUMNS);
    return ticked.groupBy(functions.col(StreamRules.COLUMNS[StreamRules.GROUP]))
        .as(Encoders.LONG(), Encoders.row(ticked.schema()))
        .flatMapGroupsWithState(new BucketJoin(rules), OutputMode.Append(),
            Encoders.BINARY(), Encoders.row(rules.outputType()),
            GroupStateTimeout.NoTimeout());
  }
}
