package io.giql.spark.join.sweep;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.execution.SparkPlan;

import io.giql.spark.columns.Bind;
import io.giql.spark.compat.Scala;
import io.giql.spark.compat.UserErrors;
import io.giql.spark.exec.UnaryExec;

import scala.collection.AbstractIterator;
import scala.collection.Iterator;
import scala.collection.immutable.Seq;
import scala.runtime.AbstractFunction1;

/**
 * One side of a sweep join before its shuffle: each row whose keys and bounds are not NULL is
 * emitted once for every tile {@code floorDiv(x, tileWidth)} its hull [lo, hi] touches, with the
 * tile and the hull appended as three columns. Rows that can match nothing (a NULL key or bound)
 * are dropped: the sweep join is an inner join.
 */
public final class TileExpandExec extends UnaryExec {
  private static final long serialVersionUID = 1L;

  private final Seq<Expression> keys;
  private final Expression lo;
  private final Expression hi;
  private final Long tileWidth;
  private final Attribute tileAttr;
  private final Attribute loAttr;
  private final Attribute hiAttr;

  public TileExpandExec(SparkPlan child, Seq<Expression> keys, Expression lo, Expression hi,
      Long tileWidth, Attribute tileAttr, Attribute loAttr, Attribute hiAttr) {
    super(child);
    this.keys = keys;
    this.lo = lo;
    this.hi = hi;
    this.tileWidth = tileWidth;
    this.tileAttr = tileAttr;
    this.loAttr = loAttr;
    this.hiAttr = hiAttr;
  }

  @Override
  public Seq<Attribute> output() {
    List<Attribute> out = Scala.list(child.output());
    out.add(tileAttr);
    out.add(loAttr);
    out.add(hiAttr);
    return Scala.seq(out);
  }

  @Override
  protected SparkPlan withChildren(List<SparkPlan> c) {
    return new TileExpandExec(c.get(0), keys, lo, hi, tileWidth, tileAttr, loAttr, hiAttr);
  }

  @Override
  public Partitioning outputPartitioning() {
    return child.outputPartitioning();
  }

  @Override
  protected Object[] fields() {
    return new Object[] {child, keys, lo, hi, tileWidth, tileAttr, loAttr, hiAttr};
  }

  @Override
  public String nodeName() {
    return "IntervalTiles";
  }

  @Override
  public String simpleString(int maxFields) {
    return nodeName() + " width " + tileWidth + ", keys " + keys.mkString("[", ", ", "]")
        + ", hull [" + lo + ", " + hi + "]";
  }

  @Override
  public RDD<InternalRow> doExecute() {
    scala.collection.Seq<Attribute> in = child.output();
    List<Expression> k = new ArrayList<>();
    for (Expression e : Scala.list(keys)) k.add(Bind.bind(e, in));
    Expand f = new Expand(Scala.seq(k), Bind.bind(lo, in),
        Bind.bind(hi, in), tileWidth, Bind.types(in));
    return child.execute().mapPartitionsInternal(f, false, Scala.tag(InternalRow.class));
  }

  static final class Expand extends AbstractFunction1<Iterator<InternalRow>, Iterator<InternalRow>>
      implements Serializable {
    private static final long serialVersionUID = 1L;
    /**
     * The most tiles one row may be cut into: past it (a whole-chromosome interval ending at the
     * 2^60 sentinel makes ~10^12) the join would run for ever; it stops with one line instead.
     */
    static final long MAX_TILES = 1_000_000;
    private final Seq<Expression> keys;
    private final Expression lo;
    private final Expression hi;
    private final long width;
    private final org.apache.spark.sql.types.DataType[] types;

    Expand(Seq<Expression> keys, Expression lo, Expression hi, long width,
        org.apache.spark.sql.types.DataType[] types) {
      this.keys = keys;
      this.lo = lo;
      this.hi = hi;
      this.width = width;
      this.types = types;
    }

    @Override
    public Iterator<InternalRow> apply(Iterator<InternalRow> rows) {
      UnsafeProjection keyProj = UnsafeProjection.create(keys);
      UnsafeProjection bounds = UnsafeProjection.create(Scala.seqOf(lo, hi));
      org.apache.spark.sql.types.DataType[] all = java.util.Arrays.copyOf(types, types.length + 3);
      all[types.length] = org.apache.spark.sql.types.IntegerType$.MODULE$;
      all[types.length + 1] = org.apache.spark.sql.types.LongType$.MODULE$;
      all[types.length + 2] = org.apache.spark.sql.types.LongType$.MODULE$;
      UnsafeProjection out = UnsafeProjection.create(all);
      GenericInternalRow extra = new GenericInternalRow(3);
      JoinedRow joined = new JoinedRow();
      return new AbstractIterator<InternalRow>() {
        InternalRow cur;
        long tile;
        long lastTile;

        private boolean load() {
          while (cur == null || tile > lastTile) {
            if (!rows.hasNext()) return false;
            InternalRow r = rows.next();
            if (keyProj.apply(r).anyNull()) continue;
            UnsafeRow b = bounds.apply(r);
            if (b.anyNull()) continue;
            long x = Math.min(b.getLong(0), b.getLong(1));
            long y = Math.max(b.getLong(0), b.getLong(1));
            cur = r;
            tile = Math.floorDiv(x, width);
            lastTile = Math.floorDiv(y, width);
            if (lastTile - tile >= MAX_TILES) {
              throw UserErrors.raised("giql sweep join: a row whose interval spans " + (y - x)
                  + " bases would be cut into more than " + String.format("%,d", MAX_TILES)
                  + " tiles of " + String.format("%,d", width) + "; use a larger tile (option tile=...,"
                  + " tile_size), or another strategy (jvm_broadcast, jvm_merge, or the cost model's"
                  + " choice)");
            }
            extra.setLong(1, x);
            extra.setLong(2, y);
          }
          return true;
        }

        @Override
        public boolean hasNext() {
          return load();
        }

        @Override
        public InternalRow next() {
          if (!load()) throw new java.util.NoSuchElementException();
          if (tile > Integer.MAX_VALUE || tile < Integer.MIN_VALUE) {
            throw new IllegalStateException("giql sweep join: tile " + tile + " is out of range;"
                + " use a wider tile (option tile=...)");
          }
          extra.setInt(0, (int) tile);
          tile++;
          UnsafeRow r = out.apply(joined.apply(cur, extra));
          return r;
        }
      };
    }
  }
}
