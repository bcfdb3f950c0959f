package io.giql.spark.plan;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.network.util.JavaUtils;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.AttributeSet;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.Count;
import org.apache.spark.sql.catalyst.plans.FullOuter$;
import org.apache.spark.sql.catalyst.plans.InnerLike;
import org.apache.spark.sql.catalyst.plans.JoinType;
import org.apache.spark.sql.catalyst.plans.LeftAnti$;
import org.apache.spark.sql.catalyst.plans.LeftOuter$;
import org.apache.spark.sql.catalyst.plans.LeftSemi$;
import org.apache.spark.sql.catalyst.plans.RightOuter$;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.SparkStrategy;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.BinaryType$;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.BooleanType$;
import org.apache.spark.sql.types.ByteType$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType$;
import org.apache.spark.sql.types.IntegerType$;
import org.apache.spark.sql.types.LongType$;
import org.apache.spark.sql.types.ShortType$;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.TimestampNTZType$;
import org.apache.spark.sql.types.TimestampType$;

import io.giql.spark.columns.Conjuncts;
import io.giql.spark.compat.Scala;
import io.giql.spark.compat.Sessions;
import io.giql.spark.join.broadcast.BroadcastIntervalJoinExec;

import io.giql.spark.exec.SumCountsExec;
import io.giql.spark.join.sweep.SweepIntervalJoinExec;
import io.giql.spark.join.sweep.TileExpandExec;
import io.giql.spark.index.Nearest;
import io.giql.spark.index.PerRow;
import io.giql.spark.join.merge.MergePlanner;
import io.giql.spark.join.merge.MergeIntervalJoinExec;

import scala.Option;
import scala.collection.immutable.Seq;

/**
 * Plans a logical Join whose condition has a {@link BandMarker} conjunct as an interval join
 * operator; the other conjuncts become the residual. Works on the optimised plan, in AQE
 * re-planning too (children may be LogicalQueryStage: they are planned by planLater).
 */
public final class BandJoinStrategy extends SparkStrategy {
  private static final long serialVersionUID = 1L;

  @Override
  public Seq<SparkPlan> apply(LogicalPlan plan) {
    if (plan instanceof Aggregate) {
      Seq<SparkPlan> total = planCount((Aggregate) plan);
      if (!total.isEmpty()) return total;
      return GroupedCount.plan((Aggregate) plan, (j, keep, p) -> {
        Seq<SparkPlan> op = planJoin(j, Option.empty(), null, keep, p);
        return op.isEmpty() ? null : op.apply(0);
      });
    }
    if (plan instanceof Project && ((Project) plan).child() instanceof Join) {
      // fuse the projection above the join into the operator's output projection: a
      // COUNT(*) then writes no columns per pair
      Project p = (Project) plan;
      Join j = (Join) p.child();
      boolean det = true;
      for (NamedExpression e : Scala.list(p.projectList())) det &= ((Expression) e).deterministic();
      if (!det || j.joinType() == LeftSemi$.MODULE$ || j.joinType() == LeftAnti$.MODULE$) {
        return Scala.seqOf();
      }
      return planJoin(j, Option.apply(Scala.imm(p.projectList())), null, null, null);
    }
    if (!(plan instanceof Join)) return Scala.seqOf();
    return planJoin((Join) plan, Option.empty(), null, null, null);
  }

  /**
   * {@code SELECT COUNT(*)} (or a count of non-nullable expressions) over a marked join, under
   * any projections: counted inside the merge join, or an inner broadcast join, which build no
   * joined row, and summed by {@link SumCountsExec}. Other joins keep Spark's aggregate.
   */
  private Seq<SparkPlan> planCount(Aggregate a) {
    if (!a.groupingExpressions().isEmpty() || a.aggregateExpressions().size() != 1) {
      return Scala.seqOf();
    }
    NamedExpression ne = a.aggregateExpressions().apply(0);
    if (!(ne instanceof Alias) || !(((Alias) ne).child() instanceof AggregateExpression)) {
      return Scala.seqOf();
    }
    AggregateExpression ae = (AggregateExpression) ((Alias) ne).child();
    if (ae.isDistinct() || ae.filter().isDefined() || !(ae.aggregateFunction() instanceof Count)) {
      return Scala.seqOf();
    }
    for (Expression c : Scala.list(ae.aggregateFunction().children())) {
      if (c.nullable() || !c.deterministic()) return Scala.seqOf();
    }
    LogicalPlan child = a.child();
    while (child instanceof Project) child = ((Project) child).child();
    if (!(child instanceof Join)) return Scala.seqOf();
    Attribute partial = attr("__giql_count", LongType$.MODULE$);
    Seq<SparkPlan> op = planJoin((Join) child, Option.empty(), partial, null, null);
    if (op.isEmpty()) return op;
    return Scala.seqOf(new SumCountsExec(op.apply(0), ne.toAttribute()));
  }

  /**
   * {@code countAttr}: plan a count of the join's rows, output as that one attribute per task;
   * the merge join counts, else an inner join's broadcast, else nothing is planned. {@code perRow}: plan one row
   * per left row, {@code keep} and its count (inner and left joins; the merge, else the
   * broadcast building the right side; nothing where the marker asks for another operator).
   */
  private Seq<SparkPlan> planJoin(Join j, Option<Seq<NamedExpression>> projection,
      Attribute countAttr, Seq<NamedExpression> keep, PerRow perRow) {
    if (j.condition().isEmpty() || !supported(j.joinType())) return Scala.seqOf();
    if (perRow != null && !(j.joinType() instanceof InnerLike)
        && j.joinType() != LeftOuter$.MODULE$) {
      return Scala.seqOf();
    }
    List<Expression> conjuncts = Conjuncts.of(j.condition().get());
    AttributeSet ls = j.left().outputSet();
    AttributeSet rs = j.right().outputSet();
    for (int i = 0; i < conjuncts.size(); i++) {
      if (!(conjuncts.get(i) instanceof BandMarker)) continue;
      BandMarker m = (BandMarker) conjuncts.get(i);
      if (!m.deterministic() || !m.resolved()) continue;
      List<Expression> mLeft = m.leftSide();
      List<Expression> mRight = m.rightSide();
      boolean swap;
      if (within(mLeft, ls) && within(mRight, rs)) swap = false;
      else if (within(mLeft, rs) && within(mRight, ls)) swap = true;
      else continue;
      List<Expression> rest = new ArrayList<>(conjuncts);
      rest.remove(i);
      List<Expression> lk = swap ? m.rightKeys() : m.leftKeys();
      List<Expression> rk = swap ? m.leftKeys() : m.rightKeys();
      // keys whose values are equal exactly when their UnsafeRow bytes are go into the hash key;
      // the others (floating point, collated strings, nested types) are checked in the residual
      List<Expression> hl = new ArrayList<>();
      List<Expression> hr = new ArrayList<>();
      for (int k = 0; k < lk.size(); k++) {
        if (binaryEquality(lk.get(k).dataType())) {
          hl.add(lk.get(k));
          hr.add(rk.get(k));
        } else {
          rest.add(new EqualTo(lk.get(k), rk.get(k)));
        }
      }
      // a residual conjunct that repeats a hashed key equality is implied by the grouping
      rest.removeIf(c -> impliedKeyEquality(c, hl, hr));
      Expression llo = asLong(swap ? m.rightLo() : m.leftLo());
      Expression lhi = asLong(swap ? m.rightHi() : m.leftHi());
      Expression rlo = asLong(swap ? m.leftLo() : m.rightLo());
      Expression rhi = asLong(swap ? m.leftHi() : m.rightHi());
      Option<Expression> residual = Option.empty();
      if (!rest.isEmpty()) {
        Expression r = rest.get(0);
        for (int k = 1; k < rest.size(); k++) r = new And(r, rest.get(k));
        residual = Option.apply(r);
      }
      BandParams params = m.params();
      if (params.nearest > 0) {
        if (countAttr != null || perRow != null) return Scala.seqOf(); // Spark aggregates
        if (swap || !(j.joinType() instanceof InnerLike) && j.joinType() != LeftOuter$.MODULE$) {
          throw new IllegalArgumentException(BandMarker.NAME + " with nearest=" + params.nearest
              + " is a k-nearest join of the marker's left side (kept, inner or left outer) to"
              + " its right side, which is indexed; this join is " + j.joinType()
              + (swap ? " with the sides the other way round" : ""));
        }
        Nearest near = new Nearest(params.nearest, params.maxGap, params.ties, params.nearestSide(),
            params.prefilter);
        if ("merge".equals(params.algo)) {
          // sorted Parquet files: each key's right rows indexed in turn, nothing broadcast
          String[] why = new String[1];
          MergeIntervalJoinExec merge = MergePlanner.plan(j, hl, hr, llo, lhi, rlo, rhi, residual,
              projection, Scala.seqOf(), true, false, why);
          MergePlanner.decided(merge != null ? merge.mergePlan().describe() : null,
              merge != null ? null : why[0]);
          if (merge != null) {
            return Scala.seqOf(merge.withNearest(new MergeIntervalJoinExec.KNearest(near,
                Scala.seq(hl), Scala.seq(hr), params.index)));
          }
          // as any algo=merge join the files do not allow: the broadcast runs it
        }
        return Scala.seqOf(new BroadcastIntervalJoinExec(planLater(j.left()),
            planLater(j.right()), j.joinType(), "right", Scala.seq(hl), llo, lhi, Scala.seq(hr),
            rlo, rhi, residual, params.index, projection).withNearest(near));
      }
      if (useMerge(params)) {
        String[] why = new String[1];
        SparkPlan merge = MergePlanner.plan(j, hl, hr, llo, lhi, rlo, rhi, residual, projection,
            countAttr == null ? Scala.seqOf() : Scala.seqOf(countAttr),
            countAttr != null || perRow != null, why);
        MergePlanner.decided(merge != null ? ((MergeIntervalJoinExec) merge).mergePlan()
            .describe() : null, merge != null ? null : why[0]);
        if (merge != null && perRow != null) {
          return Scala.seqOf(((MergeIntervalJoinExec) merge).withPerRow(keep, perRow));
        }
        if (merge != null) return Scala.seqOf(merge);
      } else {
        MergePlanner.decided(null, "algo=" + params.algo
            + " or spark.giql.merge.enabled=false");
      }
      if (countAttr != null) {
        // the broadcast counts an inner join's rows itself; the sweep leaves them to Spark
        if (!(j.joinType() instanceof InnerLike) || useSweep(j, params)) return Scala.seqOf();
        return Scala.seqOf(new BroadcastIntervalJoinExec(planLater(j.left()),
            planLater(j.right()), j.joinType(), chooseBuild(j, params.build), Scala.seq(hl), llo,
            lhi, Scala.seq(hr), rlo, rhi, residual, params.index, Option.empty())
            .withCount(countAttr));
      }
      if (perRow != null) {
        if (useSweep(j, params) || "left".equals(params.build)) return Scala.seqOf();
        return Scala.seqOf(new BroadcastIntervalJoinExec(planLater(j.left()),
            planLater(j.right()), j.joinType(), "right", Scala.seq(hl), llo, lhi, Scala.seq(hr),
            rlo, rhi, residual, params.index, Option.empty()).withPerRow(keep, perRow));
      }
      if (useSweep(j, params)) {
        return Scala.seqOf(sweep(j, hl, hr, llo, lhi, rlo, rhi, residual, params, projection));
      }
      String build = chooseBuild(j, params.build);
      SparkPlan op = new BroadcastIntervalJoinExec(planLater(j.left()), planLater(j.right()),
          j.joinType(), build, Scala.seq(hl), llo, lhi, Scala.seq(hr), rlo, rhi, residual,
          params.index, projection);
      return Scala.seqOf(op);
    }
    return Scala.seqOf();
  }

  static final long DEFAULT_TILE = 1_000_000L;

  private static boolean useMerge(BandParams p) {
    if ("merge".equals(p.algo)) return true;
    if (!"auto".equals(p.algo)) return false;
    return !"false".equalsIgnoreCase(
        SQLConf.get().getConfString("spark.giql.merge.enabled", "true"));
  }

  private static boolean useSweep(Join j, BandParams p) {
    if (!(j.joinType() instanceof InnerLike)) return false; // the sweep is inner-only for now
    if ("sweep".equals(p.algo)) return true;
    if (!"auto".equals(p.algo)) return false;
    String limit = SQLConf.get().getConfString("spark.giql.broadcastMaxBytes", "2g");
    long max = JavaUtils.byteStringAsBytes(limit);
    double l = j.left().stats().sizeInBytes().doubleValue();
    double r = j.right().stats().sizeInBytes().doubleValue();
    // a plan without statistics (an RDD, a Python data source) reports
    // spark.sql.defaultSizeInBytes (Long.MAX_VALUE), scaled down a little by projections above
    // it: an estimate of 1 PiB or more is taken as unknown, and unknown sizes keep the broadcast
    double unknown = Math.min((double) SQLConf.get().defaultSizeInBytes(), 1e15);
    double small = Math.min(l, r);
    return small > max && small < unknown;
  }

  private SparkPlan sweep(Join j, List<Expression> hl, List<Expression> hr, Expression llo,
      Expression lhi, Expression rlo, Expression rhi, Option<Expression> residual, BandParams p,
      Option<Seq<NamedExpression>> projection) {
    long w = p.tile > 0 ? p.tile : DEFAULT_TILE;
    Attribute lt = attr("__giql_tile_l", IntegerType$.MODULE$);
    Attribute ll = attr("__giql_lo_l", LongType$.MODULE$);
    Attribute lh = attr("__giql_hi_l", LongType$.MODULE$);
    Attribute rt = attr("__giql_tile_r", IntegerType$.MODULE$);
    Attribute rl = attr("__giql_lo_r", LongType$.MODULE$);
    Attribute rh = attr("__giql_hi_r", LongType$.MODULE$);
    SparkPlan l = new TileExpandExec(planLater(j.left()), Scala.seq(hl), llo, lhi, w, lt, ll, lh);
    SparkPlan r = new TileExpandExec(planLater(j.right()), Scala.seq(hr), rlo, rhi, w, rt, rl, rh);
    return new SweepIntervalJoinExec(l, r, Scala.seq(hl), Scala.seq(hr), lt, ll, lh, rt, rl, rh,
        w, residual, Scala.imm(j.output()), projection);
  }

  private static Attribute attr(String name, DataType t) {
    return new AttributeReference(name, t, false, Metadata.empty(), NamedExpression.newExprId(),
        Scala.seqOf());
  }

  /** Is {@code c} the equality {@code l[k] = r[k]} (either way round) of a hashed key? */
  static boolean impliedKeyEquality(Expression c, List<Expression> l, List<Expression> r) {
    if (!(c instanceof EqualTo)) return false;
    Expression a = ((EqualTo) c).left();
    Expression b = ((EqualTo) c).right();
    for (int k = 0; k < l.size(); k++) {
      if ((a.semanticEquals(l.get(k)) && b.semanticEquals(r.get(k)))
          || (a.semanticEquals(r.get(k)) && b.semanticEquals(l.get(k)))) {
        return true;
      }
    }
    return false;
  }

  static boolean supported(JoinType t) {
    return t instanceof InnerLike || t == LeftOuter$.MODULE$ || t == RightOuter$.MODULE$
        || t == FullOuter$.MODULE$ || t == LeftSemi$.MODULE$ || t == LeftAnti$.MODULE$;
  }


  private static boolean within(List<Expression> es, AttributeSet set) {
    for (Expression e : es) {
      if (!e.references().subsetOf(set)) return false;
    }
    return true;
  }

  static boolean binaryEquality(DataType t) {
    if (t instanceof StringType) return Sessions.binaryEquality((StringType) t);
    return t == LongType$.MODULE$ || t == IntegerType$.MODULE$ || t == ShortType$.MODULE$
        || t == ByteType$.MODULE$ || t == BooleanType$.MODULE$ || t == DateType$.MODULE$
        || t == TimestampType$.MODULE$ || t == TimestampNTZType$.MODULE$
        || t == BinaryType$.MODULE$;
  }

  private static Expression asLong(Expression e) {
    if (e.dataType() == LongType$.MODULE$) return e;
    return new Cast(e, LongType$.MODULE$, Option.empty());
  }

  /**
   * Which side to build. Building costs collecting and broadcasting that side; a preserved build
   * side (outer joins, semi/anti building the left) costs one more pass over the streamed side.
   */
  private static String chooseBuild(Join j, String wanted) {
    if (!"auto".equals(wanted)) return wanted;
    double l = j.left().stats().sizeInBytes().doubleValue();
    double r = j.right().stats().sizeInBytes().doubleValue();
    JoinType t = j.joinType();
    boolean keepL = t == LeftOuter$.MODULE$ || t == FullOuter$.MODULE$ || t == LeftSemi$.MODULE$
        || t == LeftAnti$.MODULE$;
    boolean keepR = t == RightOuter$.MODULE$ || t == FullOuter$.MODULE$;
    double costRight = 2 * r + (keepR ? l : 0);
    double costLeft = 2 * l + (keepL ? r : 0);
    return costLeft < costRight ? "left" : "right";
  }
}
