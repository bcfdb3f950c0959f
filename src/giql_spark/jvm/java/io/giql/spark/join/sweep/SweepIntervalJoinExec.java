package io.giql.spark.join.sweep;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Ascending$;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.BaseOrdering;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.NullsFirst$;
import org.apache.spark.sql.catalyst.expressions.RowOrdering;
import org.apache.spark.sql.catalyst.expressions.SortOrder;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.plans.physical.Distribution;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.catalyst.plans.physical.UnknownPartitioning;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.types.DataType;

import io.giql.spark.columns.Residual;
import io.giql.spark.columns.Bind;
import io.giql.spark.compat.Scala;
import io.giql.spark.compat.Distributions;
import io.giql.spark.exec.ExecNode;
import io.giql.spark.exec.JoinIterator;

import scala.Option;
import scala.collection.Iterator;
import scala.collection.immutable.Seq;
import scala.runtime.AbstractFunction2;

/**
 * Inner interval join of two large sides: both are tiled ({@link TileExpandExec}: a row goes to
 * every tile its hull touches), shuffled by (keys, tile), sorted by (keys, tile, lo) with Spark's
 * sorter, and swept tile by tile. A pair is produced only in the tile holding the larger of the
 * two lo values (the start of the hulls' intersection), so each pair comes out once; memory is
 * the rows active at one position, not the tile.
 */
public final class SweepIntervalJoinExec extends ExecNode {
  private static final long serialVersionUID = 1L;

  private final SparkPlan left;   // TileExpandExec (or what replaced it) over the left side
  private final SparkPlan right;
  private final Seq<Expression> leftKeys;
  private final Seq<Expression> rightKeys;
  private final Attribute leftTile;
  private final Attribute leftLo;
  private final Attribute leftHi;
  private final Attribute rightTile;
  private final Attribute rightLo;
  private final Attribute rightHi;
  private final Long tileWidth;
  private final Option<Expression> residual;
  private final Seq<Attribute> joinOutput; // left.output ++ right.output of the logical join
  private final Option<Seq<NamedExpression>> projection;

  public SweepIntervalJoinExec(SparkPlan left, SparkPlan right, Seq<Expression> leftKeys,
      Seq<Expression> rightKeys, Attribute leftTile, Attribute leftLo, Attribute leftHi,
      Attribute rightTile, Attribute rightLo, Attribute rightHi, Long tileWidth,
      Option<Expression> residual, Seq<Attribute> joinOutput,
      Option<Seq<NamedExpression>> projection) {
    this.left = left;
    this.right = right;
    this.leftKeys = leftKeys;
    this.rightKeys = rightKeys;
    this.leftTile = leftTile;
    this.leftLo = leftLo;
    this.leftHi = leftHi;
    this.rightTile = rightTile;
    this.rightLo = rightLo;
    this.rightHi = rightHi;
    this.tileWidth = tileWidth;
    this.residual = residual;
    this.joinOutput = joinOutput;
    this.projection = projection;
  }

  @Override
  public Seq<Attribute> output() {
    if (projection.isDefined()) {
      List<Attribute> out = new ArrayList<>();
      for (NamedExpression e : Scala.list(projection.get())) out.add(e.toAttribute());
      return Scala.seq(out);
    }
    return joinOutput;
  }

  @Override
  public Seq<SparkPlan> children() {
    return Scala.seqOf(left, right);
  }

  @Override
  protected SparkPlan withChildren(List<SparkPlan> c) {
    return new SweepIntervalJoinExec(c.get(0), c.get(1), leftKeys, rightKeys, leftTile,
        leftLo, leftHi, rightTile, rightLo, rightHi, tileWidth, residual, joinOutput, projection);
  }

  @Override
  protected Object[] fields() {
    return new Object[] {
        left, right, leftKeys, rightKeys, leftTile, leftLo, leftHi, rightTile, rightLo, rightHi,
        tileWidth, residual, joinOutput, projection};
  }

  @Override
  protected java.util.Map<String, String> metricDescriptions() {
    return joinMetrics();
  }

  @Override
  public String nodeName() {
    return "SweepIntervalJoin";
  }

  @Override
  public String simpleString(int maxFields) {
    return nodeName() + " Inner, keys " + leftKeys.mkString("[", ", ", "]") + " = "
        + rightKeys.mkString("[", ", ", "]") + ", tile width " + tileWidth
        + (residual.isDefined() ? ", residual " + residual.get() : "")
        + (projection.isDefined() ? ", output " + projection.get().mkString("[", ", ", "]") : "");
  }

  private List<Expression> clustering(Seq<Expression> keys, Attribute tile) {
    List<Expression> c = new ArrayList<>(Scala.list(keys));
    c.add(tile);
    return c;
  }

  @Override
  public Seq<Distribution> requiredChildDistribution() {
    Distribution l = Distributions.clustered(clustering(leftKeys, leftTile));
    Distribution r = Distributions.clustered(clustering(rightKeys, rightTile));
    return Scala.seqOf(l, r);
  }

  private static List<SortOrder> order(List<Expression> c, Attribute lo) {
    List<SortOrder> o = new ArrayList<>();
    List<Expression> all = new ArrayList<>(c);
    all.add(lo);
    for (Expression e : all) {
      o.add(new SortOrder(e, Ascending$.MODULE$, NullsFirst$.MODULE$, Scala.seqOf()));
    }
    return o;
  }

  @Override
  protected List<List<SortOrder>> childOrdering() {
    return List.of(order(clustering(leftKeys, leftTile), leftLo),
        order(clustering(rightKeys, rightTile), rightLo));
  }

  @Override
  public Partitioning outputPartitioning() {
    return new UnknownPartitioning(0);
  }

  @Override
  public RDD<InternalRow> doExecute() {
    Seq<Attribute> lOut = Scala.imm(left.output());
    Seq<Attribute> rOut = Scala.imm(right.output());
    List<Expression> lk = new ArrayList<>();
    for (Expression e : Scala.list(leftKeys)) lk.add(Bind.bind(e, lOut));
    List<Expression> rk = new ArrayList<>();
    for (Expression e : Scala.list(rightKeys)) rk.add(Bind.bind(e, rOut));
    DataType[] keyTypes = new DataType[lk.size()];
    for (int i = 0; i < keyTypes.length; i++) keyTypes[i] = lk.get(i).dataType();
    List<Expression> result = new ArrayList<>();
    if (projection.isDefined()) {
      for (NamedExpression e : Scala.list(projection.get())) result.add((Expression) e);
    } else {
      result.addAll(Scala.list(joinOutput));
    }
    Sweep s = new Sweep(Scala.seq(lk), Scala.seq(rk), keyTypes, ordinal(lOut, leftTile),
        ordinal(lOut, leftLo), ordinal(lOut, leftHi), ordinal(rOut, rightTile),
        ordinal(rOut, rightLo), ordinal(rOut, rightHi), lOut.size(), rOut.size(), tileWidth,
        residual.isDefined() ? residual.get() : null, lOut, rOut, Scala.seq(result), longMetric("numOutputRows"), longMetric("numCandidates"));
    return left.execute().zipPartitions(right.execute(), false, s, Scala.tag(InternalRow.class),
        Scala.tag(InternalRow.class));
  }

  private static int ordinal(Seq<Attribute> attrs, Attribute a) {
    List<Attribute> l = Scala.list(attrs);
    for (int i = 0; i < l.size(); i++) {
      if (l.get(i).exprId().equals(a.exprId())) return i;
    }
    throw new IllegalStateException("giql sweep join: " + a + " not in " + l);
  }

  static final class Sweep
      extends AbstractFunction2<Iterator<InternalRow>, Iterator<InternalRow>, Iterator<InternalRow>>
      implements Serializable {
    private static final long serialVersionUID = 1L;
    final Seq<Expression> leftKeys;
    final Seq<Expression> rightKeys;
    final DataType[] keyTypes;
    final int lTile, lLo, lHi, rTile, rLo, rHi, lFields, rFields;
    final long width;
    final Expression residual;
    final Seq<Attribute> joinedInput;
    final Seq<Attribute> leftIn;
    final Seq<Attribute> rightIn;
    final Seq<Expression> output;
    final SQLMetric numOut;
    final SQLMetric numCand;

    Sweep(Seq<Expression> leftKeys, Seq<Expression> rightKeys, DataType[] keyTypes, int lTile,
        int lLo, int lHi, int rTile, int rLo, int rHi, int lFields, int rFields, long width,
        Expression residual, Seq<Attribute> leftIn, Seq<Attribute> rightIn, Seq<Expression> output,
        SQLMetric numOut, SQLMetric numCand) {
      this.leftKeys = leftKeys;
      this.rightKeys = rightKeys;
      this.keyTypes = keyTypes;
      this.lTile = lTile;
      this.lLo = lLo;
      this.lHi = lHi;
      this.rTile = rTile;
      this.rLo = rLo;
      this.rHi = rHi;
      this.lFields = lFields;
      this.rFields = rFields;
      this.width = width;
      this.residual = residual;
      this.joinedInput = Scala.concat(leftIn, rightIn);
      this.leftIn = leftIn;
      this.rightIn = rightIn;
      this.output = output;
      this.numOut = numOut;
      this.numCand = numCand;
    }

    @Override
    public Iterator<InternalRow> apply(Iterator<InternalRow> l, Iterator<InternalRow> r) {
      return new SweepIterator(this, l, r);
    }
  }

  /** Merges the two sorted partitions group by group, sweeping each (keys, tile) group. */
  static final class SweepIterator extends JoinIterator {
    private final Sweep s;
    private final Iterator<InternalRow> li;
    private final Iterator<InternalRow> ri;
    private final UnsafeProjection lKey;
    private final UnsafeProjection rKey;
    private final BaseOrdering keyOrd;
    private final Residual residual;
    private final UnsafeProjection result;
    private final JoinedRow joined = new JoinedRow();
    private InternalRow lNext;
    private InternalRow rNext;
    private UnsafeRow gKey;
    private int gTile;
    private boolean inGroup;
    private final ArrayList<UnsafeRow> actL = new ArrayList<>();
    private final ArrayList<UnsafeRow> actR = new ArrayList<>();
    private UnsafeRow x;
    private boolean xLeft;
    private ArrayList<UnsafeRow> bList;
    private int bi;

    SweepIterator(Sweep s, Iterator<InternalRow> li, Iterator<InternalRow> ri) {
      super(s.numOut, s.numCand);
      this.s = s;
      this.li = li;
      this.ri = ri;
      this.lKey = UnsafeProjection.create(s.leftKeys);
      this.rKey = UnsafeProjection.create(s.rightKeys);
      this.keyOrd = RowOrdering.createNaturalAscendingOrdering(
          Scala.seq(java.util.Arrays.asList(s.keyTypes)));
      this.residual = Residual.of(s.residual, s.joinedInput, s.leftIn, s.rightIn,
          org.apache.spark.TaskContext.getPartitionId());
      this.result = UnsafeProjection.create(s.output, s.joinedInput);
      this.lNext = li.hasNext() ? li.next() : null;
      this.rNext = ri.hasNext() ? ri.next() : null;
    }

    private boolean inGroup(InternalRow row, boolean left) {
      if (row == null) return false;
      if ((left ? row.getInt(s.lTile) : row.getInt(s.rTile)) != gTile) return false;
      return (left ? lKey.apply(row) : rKey.apply(row)).equals(gKey);
    }

    /** Positions both sides at the next (keys, tile) group that both have. */
    private boolean startGroup() {
      while (lNext != null && rNext != null) {
        UnsafeRow kl = lKey.apply(lNext);
        UnsafeRow kr = rKey.apply(rNext);
        int c = keyOrd.compare(kl, kr);
        if (c == 0) c = Integer.compare(lNext.getInt(s.lTile), rNext.getInt(s.rTile));
        if (c < 0) {
          lNext = li.hasNext() ? li.next() : null;
        } else if (c > 0) {
          rNext = ri.hasNext() ? ri.next() : null;
        } else {
          gKey = kl.copy();
          gTile = lNext.getInt(s.lTile);
          inGroup = true;
          actL.clear();
          actR.clear();
          return true;
        }
      }
      return false;
    }

    private static void purge(ArrayList<UnsafeRow> act, int hiOrd, long lo) {
      int n = act.size();
      int i = 0;
      while (i < n) {
        if (act.get(i).getLong(hiOrd) < lo) {
          act.set(i, act.get(n - 1));
          act.remove(--n);
        } else {
          i++;
        }
      }
    }

    @Override
    protected boolean advance() {
      while (true) {
        if (x != null) {
          while (bi < bList.size()) {
            UnsafeRow b = bList.get(bi++);
            candRows++;
            if (xLeft) joined.apply(x, b);
            else joined.apply(b, x);
            if (residual == null
                || (xLeft ? residual.holds(x, b, joined) : residual.holds(b, x, joined))) {
              out = result.apply(joined);
              return true;
            }
          }
          (xLeft ? actL : actR).add(x);
          x = null;
        }
        if (!inGroup && !startGroup()) {
          flush();
          return false;
        }
        boolean lIn = inGroup(lNext, true);
        boolean rIn = inGroup(rNext, false);
        if (!lIn && !rIn) {
          inGroup = false;
          continue;
        }
        if (lIn && (!rIn || lNext.getLong(s.lLo) <= rNext.getLong(s.rLo))) {
          x = ((UnsafeRow) lNext).copy();
          xLeft = true;
          lNext = li.hasNext() ? li.next() : null;
        } else {
          x = ((UnsafeRow) rNext).copy();
          xLeft = false;
          rNext = ri.hasNext() ? ri.next() : null;
        }
        long lo = x.getLong(xLeft ? s.lLo : s.rLo);
        bList = xLeft ? actR : actL;
        purge(bList, xLeft ? s.rHi : s.lHi, lo);
        // each pair is emitted only in the tile of max(lo_a, lo_b), which is lo of x here
        bi = Math.floorDiv(lo, s.width) == gTile ? 0 : bList.size();
      }
    }
  }
}
