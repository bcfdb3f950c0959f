package io.giql.spark.plan;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.AttributeSet;
import org.apache.spark.sql.catalyst.expressions.Coalesce;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.If;
import org.apache.spark.sql.catalyst.expressions.IsNotNull;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.MonotonicallyIncreasingID;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateExpression$;
import org.apache.spark.sql.catalyst.expressions.aggregate.AggregateFunction;
import org.apache.spark.sql.catalyst.expressions.aggregate.Complete$;
import org.apache.spark.sql.catalyst.expressions.aggregate.Count;
import org.apache.spark.sql.catalyst.expressions.aggregate.First;
import org.apache.spark.sql.catalyst.expressions.aggregate.Last;
import org.apache.spark.sql.catalyst.expressions.aggregate.Max;
import org.apache.spark.sql.catalyst.expressions.aggregate.Min;
import org.apache.spark.sql.catalyst.expressions.aggregate.Sum;
import org.apache.spark.sql.catalyst.plans.InnerLike;
import org.apache.spark.sql.catalyst.plans.LeftOuter$;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.Filter;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.aggregate.AggUtils;
import org.apache.spark.sql.types.IntegralType;
import org.apache.spark.sql.types.LongType$;
import org.apache.spark.sql.types.Metadata;

import io.giql.spark.compat.Scala;
import io.giql.spark.index.PerRow;

import scala.Option;
import scala.collection.immutable.Seq;
import scala.runtime.AbstractPartialFunction;

/**
 * {@code SELECT <left columns>, COUNT(*) ... FROM a JOIN b ON <interval condition> GROUP BY
 * <left columns>} (inner or left join, under any projections): the join reports one row per
 * left row with the number of join rows it makes ({@link PerRow}), and Spark's aggregate sums
 * those counts per group. The same groups and counts as counting the pairs, with one row per
 * left row reaching the aggregate instead of one per pair.
 *
 * <p>Matched: grouping expressions over the left side only; {@code COUNT}s of {@code *} or of
 * expressions that are never NULL on their side (a left row's count is then its number of join
 * rows, or, for a right-side argument, of matches; all of one kind), and of any other
 * expressions as the per-row sum of 1 where they are all set; other results over the grouping
 * expressions, or {@code first}, {@code last}, {@code min}, {@code max} of left expressions
 * (their value over a group's left rows does not depend on how often each row repeats).
 */
final class GroupedCount {
  private GroupedCount() {}

  /** Plans the join as a per-row count; null where it cannot. */
  interface Planner {
    SparkPlan plan(Join join, Seq<NamedExpression> keep, PerRow perRow);
  }

  static Seq<SparkPlan> plan(Aggregate a, Planner planner) {
    if (a.groupingExpressions().isEmpty()) return Scala.seqOf();
    List<Project> projects = new ArrayList<>();
    LogicalPlan child = a.child();
    while (child instanceof Project) {
      projects.add((Project) child);
      child = ((Project) child).child();
    }
    if (!(child instanceof Join)) return Scala.seqOf();
    Join j = (Join) child;
    boolean leftOuter = j.joinType() == LeftOuter$.MODULE$;
    if (!(j.joinType() instanceof InnerLike) && !leftOuter) return Scala.seqOf();
    if (j.condition().isEmpty() || !hasMarker(j.condition().get())) return Scala.seqOf();
    AttributeSet leftSet = j.left().outputSet();

    List<NamedExpression> grouping = new ArrayList<>();
    List<Expression> groupingExprs = new ArrayList<>();
    for (Expression g : Scala.list(a.groupingExpressions())) {
      Expression s = inline(g, projects);
      if (!s.deterministic() || !s.references().subsetOf(leftSet)) return Scala.seqOf();
      grouping.add(s instanceof Attribute ? (Attribute) s
          : new Alias(s, "_groupingexpression", NamedExpression.newExprId(), Scala.seqOf(),
              Option.empty(), Scala.seqOf()));
      groupingExprs.add(s);
    }

    Attribute count = new AttributeReference("__giql_per_row_count", LongType$.MODULE$, false,
        Metadata.empty(), NamedExpression.newExprId(), Scala.seqOf());
    Boolean[] floorOne = {null};
    AggregateExpression[] sum = {null};
    List<Expression> sums = new ArrayList<>();
    List<Attribute> sumAttrs = new ArrayList<>();
    AttributeSet joinSet = leftSet.$plus$plus(j.right().outputSet());
    List<AggregateExpression> aggs = new ArrayList<>();
    List<NamedExpression> results = new ArrayList<>();
    Map<ExprId, Attribute> reads = new java.util.LinkedHashMap<>();
    BandMarker marker = markerOf(j.condition().get());
    Attribute[] covered = {null};
    AggregateExpression[] coveredAgg = {null};
    for (NamedExpression ne : Scala.list(a.aggregateExpressions())) {
      boolean[] ok = {true};
      Expression s = inline((Expression) ne, projects).transformDown(
          new AbstractPartialFunction<Expression, Expression>() {
            @Override
            public boolean isDefinedAt(Expression x) {
              if (x instanceof AggregateExpression) return true;
              for (Expression g : groupingExprs) if (x.semanticEquals(g)) return true;
              return false;
            }

            @Override
            public Expression apply(Expression x) {
              if (x instanceof AggregateExpression) {
                AggregateExpression ae = (AggregateExpression) x;
                AggregateFunction f = ae.aggregateFunction();
                if (f instanceof Count) {
                  // counts of every join row (or every match) are all the same per-row sum
                  boolean plain = !ae.isDistinct() && ae.filter().isEmpty()
                      && ae.mode() == Complete$.MODULE$;
                  Boolean every = plain ? countsEveryRow(f, projects, j) : null;
                  if (every == null && plain && sums.size() < 63) {
                    // a count of values that may be NULL: the sum over the join rows of
                    // 1 where every argument is set, else 0 (a padded row's right side is NULL)
                    Expression set = null;
                    for (Expression c : Scala.list(f.children())) {
                      Expression nn = new IsNotNull(inline(c, projects));
                      set = set == null ? nn : new And(set, nn);
                    }
                    if (set != null && set.deterministic()
                        && set.references().subsetOf(joinSet)) {
                      Attribute part = new AttributeReference("__giql_per_row_sum",
                          LongType$.MODULE$, true, Metadata.empty(), NamedExpression.newExprId(),
                          Scala.seqOf());
                      sums.add(new If(set, new Literal(1L, LongType$.MODULE$),
                          new Literal(0L, LongType$.MODULE$)));
                      sumAttrs.add(part);
                      AggregateExpression total = AggregateExpression$.MODULE$.apply(
                          new Sum(part), Complete$.MODULE$, false, Option.empty());
                      aggs.add(total);
                      return new Coalesce(Scala.<Expression>seqOf(total.resultAttribute(),
                          new Literal(0L, LongType$.MODULE$)));
                    }
                  }
                  if (every == null || floorOne[0] != null
                      && floorOne[0] != (leftOuter && every)) {
                    ok[0] = false;
                    return x;
                  }
                  if (floorOne[0] == null) {
                    floorOne[0] = leftOuter && every;
                    sum[0] = AggregateExpression$.MODULE$.apply(new Sum(count),
                        Complete$.MODULE$, false, Option.empty());
                    aggs.add(sum[0]);
                  }
                  return new Coalesce(Scala.<Expression>seqOf(sum[0].resultAttribute(),
                      new Literal(0L, LongType$.MODULE$)));
                }
                if (f instanceof Covered && !ae.isDistinct() && ae.filter().isEmpty()
                    && ae.mode() == Complete$.MODULE$ && marker != null
                    && ownHulls((Covered) f, marker, projects)) {
                  // the covered points of the join's own hulls: the operator keeps each left
                  // row's runs (one value per left row, so only where a group is one left row)
                  if (covered[0] == null) {
                    covered[0] = new AttributeReference("__giql_per_row_covered",
                        LongType$.MODULE$, false, Metadata.empty(), NamedExpression.newExprId(),
                        Scala.seqOf());
                    coveredAgg[0] = AggregateExpression$.MODULE$.apply(new Max(covered[0]),
                        Complete$.MODULE$, false, Option.empty());
                    aggs.add(coveredAgg[0]);
                  }
                  return coveredAgg[0].resultAttribute();
                }
                if (f instanceof Sum && !ae.isDistinct() && ae.filter().isEmpty()
                    && ae.mode() == Complete$.MODULE$ && sums.size() < 63) {
                  // a sum over the join rows of any integral expression: each left row sums
                  // its own join rows, Spark's aggregate sums the rows of a group
                  Expression e = inline(f.children().head(), projects);
                  if (e.deterministic() && e.references().subsetOf(joinSet)
                      && e.dataType() instanceof IntegralType) {
                    Attribute part = new AttributeReference("__giql_per_row_sum",
                        LongType$.MODULE$, true, Metadata.empty(), NamedExpression.newExprId(),
                        Scala.seqOf());
                    sums.add(e);
                    sumAttrs.add(part);
                    AggregateExpression total = AggregateExpression$.MODULE$.apply(
                        new Sum(part), Complete$.MODULE$, false, Option.empty());
                    aggs.add(total);
                    return total.resultAttribute();
                  }
                }
                if (!(f instanceof First || f instanceof Last || f instanceof Min
                    || f instanceof Max) || ae.isDistinct() || ae.filter().isDefined()
                    || ae.mode() != Complete$.MODULE$ || !f.deterministic()
                    || !f.references().subsetOf(leftSet)) {
                  ok[0] = false;
                  return x;
                }
                for (Attribute r : Scala.list(f.references().toSeq())) reads.put(r.exprId(), r);
                aggs.add(ae);
                return ae.resultAttribute();
              }
              for (int k = 0; k < groupingExprs.size(); k++) {
                if (x.semanticEquals(groupingExprs.get(k))) return grouping.get(k).toAttribute();
              }
              return x;
            }
          });
      if (!ok[0]) return Scala.seqOf();
      // what is left must read only the grouping columns and aggregate results
      for (Attribute r : Scala.list(s.references().toSeq())) {
        if (!isOutput(r, grouping, aggs)) return Scala.seqOf();
      }
      results.add(named(s, ne));
    }
    if (floorOne[0] == null && sums.isEmpty() && covered[0] == null) return Scala.seqOf();
    boolean oneLeftRow = groupsOneLeftRow(grouping, j.left());
    if (covered[0] != null && !oneLeftRow) return Scala.seqOf(); // Spark unions each group's runs
    PerRow perRow = new PerRow(count, floorOne[0] != null && floorOne[0], sums, sumAttrs,
        covered[0]);

    List<NamedExpression> keep = new ArrayList<>(grouping);
    for (Attribute r : reads.values()) {
      boolean have = false;
      for (NamedExpression g : grouping) have |= g.exprId().equals(r.exprId());
      if (!have) keep.add(r);
    }
    if (oneLeftRow) {
      // the operator's own output projection computes the results: no projection above it
      SparkPlan op = planner.plan(j, Scala.seq(perRowResults(results, aggs, grouping)), perRow);
      return op == null ? Scala.seqOf() : Scala.seqOf(op);
    }
    keep.addAll(perRow.outputs());
    SparkPlan op = planner.plan(j, Scala.seq(keep), perRow);
    if (op == null) return Scala.seqOf();
    List<NamedExpression> groupAttrs = new ArrayList<>();
    for (NamedExpression g : grouping) groupAttrs.add(g.toAttribute());
    return Scala.imm(AggUtils.planAggregateWithoutDistinct(Scala.seq(groupAttrs), Scala.seq(aggs),
        Scala.seq(results), op));
  }

  /**
   * Whether some grouping column is a row id made on the left side
   * ({@code monotonically_increasing_id()}, as the DataFrame API's {@code count_overlaps} groups):
   * then each group is one left row, which the operator reports at most once.
   */
  private static boolean groupsOneLeftRow(List<NamedExpression> grouping, LogicalPlan left) {
    LogicalPlan p = left;
    while (true) {
      if (p instanceof Project) {
        for (NamedExpression ne : Scala.list(((Project) p).projectList())) {
          if (!(ne instanceof Alias)
              || !(((Alias) ne).child() instanceof MonotonicallyIncreasingID)) continue;
          for (NamedExpression g : grouping) {
            if (g instanceof Attribute && g.exprId().equals(ne.exprId())) return true;
          }
        }
        p = ((Project) p).child();
      } else if (p instanceof Filter) {
        p = ((Filter) p).child();
      } else {
        return false;
      }
    }
  }

  /**
   * The aggregate over groups of one left row each, as the operator's projection over the left
   * row and its per-row attributes: the count's sum is the row's count, {@code first},
   * {@code last}, {@code min}, {@code max} are the row's value, and a grouping expression is
   * itself. No exchange, no sort, no aggregation buffer, no row copied twice.
   */
  private static List<NamedExpression> perRowResults(List<NamedExpression> results,
      List<AggregateExpression> aggs, List<NamedExpression> grouping) {
    Map<ExprId, Expression> value = new HashMap<>();
    for (AggregateExpression ae : aggs) {
      AggregateFunction f = ae.aggregateFunction();
      value.put(ae.resultAttribute().exprId(), f.children().head());
    }
    for (NamedExpression g : grouping) {
      if (g instanceof Alias) value.put(g.exprId(), ((Alias) g).child());
    }
    List<NamedExpression> out = new ArrayList<>();
    for (NamedExpression r : results) out.add(named(substitute((Expression) r, value), r));
    return out;
  }

  /** {@code e} under {@code as}'s name and id: itself where it already is that attribute. */
  private static NamedExpression named(Expression e, NamedExpression as) {
    if (e instanceof NamedExpression && ((NamedExpression) e).exprId().equals(as.exprId())) {
      return (NamedExpression) e;
    }
    Expression body = e instanceof Alias ? ((Alias) e).child() : e;
    return new Alias(body, as.name(), as.exprId(), as.qualifier(), Option.empty(), Scala.seqOf());
  }

  /**
   * Whether a {@code COUNT}'s arguments count every join row (no argument, or arguments never
   * NULL on the left side) or only matches (never NULL on the right side, so a padded row counts
   * 0); null when neither holds.
   */
  private static Boolean countsEveryRow(AggregateFunction count, List<Project> projects,
      Join j) {
    boolean left = true;
    boolean right = true;
    for (Expression c : Scala.list(count.children())) {
      Expression s = inline(c, projects);
      if (!s.deterministic()) return null;
      left &= s.references().subsetOf(j.left().outputSet())
          && !rebind(s, j.left().output()).nullable();
      right &= s.references().subsetOf(j.right().outputSet())
          && !rebind(s, j.right().output()).nullable();
    }
    if (left) return true;
    if (right) return false;
    return null;
  }

  private static boolean isOutput(Attribute r, List<NamedExpression> grouping,
      List<AggregateExpression> aggs) {
    for (NamedExpression g : grouping) if (g.exprId().equals(r.exprId())) return true;
    for (AggregateExpression ae : aggs) {
      if (ae.resultAttribute().exprId().equals(r.exprId())) return true;
    }
    return false;
  }

  private static boolean hasMarker(Expression e) {
    return markerOf(e) != null;
  }

  /** The join condition's marker, or null. */
  private static BandMarker markerOf(Expression e) {
    if (e instanceof And) {
      BandMarker m = markerOf(((And) e).left());
      return m != null ? m : markerOf(((And) e).right());
    }
    return e instanceof BandMarker ? (BandMarker) e : null;
  }

  /** Whether {@code giql_covered}'s bounds are the marker's hulls (left, then right). */
  private static boolean ownHulls(Covered c, BandMarker m, List<Project> projects) {
    List<Expression> b = c.bounds();
    List<Expression> hull = List.of(m.leftLo(), m.leftHi(), m.rightLo(), m.rightHi());
    for (int i = 0; i < 4; i++) {
      if (!inline(b.get(i), projects).semanticEquals(hull.get(i))) return false;
    }
    return true;
  }

  /** {@code e} with each projection's aliases replaced by what they stand for, down to the join. */
  static Expression inline(Expression e, List<Project> projects) {
    Expression out = e;
    for (Project p : projects) {
      Map<ExprId, Expression> aliases = new HashMap<>();
      for (NamedExpression ne : Scala.list(p.projectList())) {
        if (ne instanceof Alias) aliases.put(ne.exprId(), ((Alias) ne).child());
      }
      if (!aliases.isEmpty()) out = substitute(out, aliases);
    }
    return out;
  }

  /** {@code e} over the side's own attributes (a left join's output marks the right nullable). */
  private static Expression rebind(Expression e, scala.collection.Seq<Attribute> side) {
    Map<ExprId, Attribute> byId = new HashMap<>();
    for (Attribute a : Scala.list(side)) byId.put(a.exprId(), a);
    return substitute(e, byId);
  }

  /** {@code e} with each attribute whose id {@code by} maps replaced by what it maps to. */
  private static Expression substitute(Expression e, Map<ExprId, ? extends Expression> by) {
    return e.transformUp(new AbstractPartialFunction<Expression, Expression>() {
      @Override
      public boolean isDefinedAt(Expression x) {
        return x instanceof Attribute && by.containsKey(((Attribute) x).exprId());
      }

      @Override
      public Expression apply(Expression x) {
        return by.get(((Attribute) x).exprId());
      }
    });
  }
}
