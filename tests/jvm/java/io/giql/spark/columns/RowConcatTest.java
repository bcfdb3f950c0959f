package io.giql.spark.columns;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Random;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.Coalesce;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType$;
import org.apache.spark.sql.types.BooleanType$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType$;
import org.apache.spark.sql.types.IntegerType$;
import org.apache.spark.sql.types.LongType$;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StringType$;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

import io.giql.spark.Check;
import io.giql.spark.compat.Scala;

/**
 * {@link RowConcat} against Spark's own projection of the same output: random schemas of both
 * rows (fixed-width, strings, binary, small and large decimals, arrays, structs), random rows
 * with NULLs, computed columns after the inputs or none; and the outputs it must refuse.
 */
public final class RowConcatTest {
  private RowConcatTest() {}

  private static final DataType[] TYPES = {
    LongType$.MODULE$, IntegerType$.MODULE$, DoubleType$.MODULE$, BooleanType$.MODULE$,
    StringType$.MODULE$, BinaryType$.MODULE$, new DecimalType(10, 2), new DecimalType(30, 5),
    new ArrayType(StringType$.MODULE$, true),
    new StructType(new StructField[] {
      new StructField("a", LongType$.MODULE$, true, Metadata.empty()),
      new StructField("b", StringType$.MODULE$, true, Metadata.empty())})
  };

  private static Attribute attr(int i, DataType t) {
    return new AttributeReference("c" + i, t, true, Metadata.empty(), NamedExpression.newExprId(),
        Scala.seqOf());
  }

  private static Object value(Random rnd, DataType t) {
    if (rnd.nextInt(5) == 0) return null;
    if (t == LongType$.MODULE$) return rnd.nextLong();
    if (t == IntegerType$.MODULE$) return rnd.nextInt();
    if (t == DoubleType$.MODULE$) return rnd.nextDouble();
    if (t == BooleanType$.MODULE$) return rnd.nextBoolean();
    if (t == StringType$.MODULE$) return UTF8String.fromString("s" + "x".repeat(rnd.nextInt(40)) + rnd.nextInt());
    if (t == BinaryType$.MODULE$) {
      byte[] b = new byte[rnd.nextInt(20)];
      rnd.nextBytes(b);
      return b;
    }
    if (t instanceof DecimalType) {
      DecimalType d = (DecimalType) t;
      BigDecimal v = new BigDecimal(new java.math.BigInteger(d.precision() * 3, rnd), d.scale());
      return Decimal.apply(v.remainder(BigDecimal.TEN.pow(d.precision() - d.scale())), d.precision(), d.scale());
    }
    if (t instanceof ArrayType) {
      Object[] items = new Object[rnd.nextInt(4)];
      for (int i = 0; i < items.length; i++) items[i] = value(rnd, StringType$.MODULE$);
      return new GenericArrayData(items);
    }
    StructType s = (StructType) t;
    return new GenericInternalRow(new Object[] {value(rnd, s.fields()[0].dataType()),
        value(rnd, s.fields()[1].dataType())});
  }

  private static UnsafeRow row(Random rnd, List<Attribute> attrs) {
    Object[] vs = new Object[attrs.size()];
    DataType[] ts = new DataType[attrs.size()];
    for (int i = 0; i < vs.length; i++) {
      ts[i] = attrs.get(i).dataType();
      vs[i] = value(rnd, ts[i]);
    }
    return UnsafeProjection.create(ts).apply(new GenericInternalRow(vs)).copy();
  }

  private static void same(InternalRow expected, InternalRow actual, List<Expression> out) {
    Check.equal(expected.numFields(), actual.numFields(), "fields");
    for (int i = 0; i < out.size(); i++) {
      DataType t = out.get(i).dataType();
      Object e = expected.isNullAt(i) ? null : expected.get(i, t);
      Object a = actual.isNullAt(i) ? null : actual.get(i, t);
      if (e instanceof byte[]) {
        Check.equal(true, java.util.Arrays.equals((byte[]) e, (byte[]) a), "field " + i + " (" + t + ")");
      } else {
        Check.equal(Objects.toString(e), Objects.toString(a), "field " + i + " (" + t + ")");
      }
    }
  }

  public static void run(Check c) {
    c.test("RowConcat: the two rows side by side, as Spark projects them", () -> {
      Random rnd = new Random(11);
      for (int round = 0; round < 200; round++) {
        int n1 = rnd.nextInt(5);
        int n2 = 1 + rnd.nextInt(5);
        List<Attribute> in = new ArrayList<>();
        for (int i = 0; i < n1 + n2; i++) in.add(attr(i, TYPES[rnd.nextInt(TYPES.length)]));
        List<Expression> out = new ArrayList<>(in);
        // computed columns after the inputs, or none (a k-nearest join's distance)
        for (int k = rnd.nextInt(3); k > 0; k--) {
          Attribute a = in.get(rnd.nextInt(in.size()));
          out.add(new Coalesce(Scala.seqOf((Expression) a, Literal.create(value(rnd, a.dataType()), a.dataType()))));
        }
        RowConcat concat = RowConcat.of(Scala.seq(out), Scala.seq(in), n1);
        Check.equal(true, concat != null, "a concatenation for inputs then computed columns");
        UnsafeProjection proj = UnsafeProjection.create(Scala.seq(out), Scala.seq(in));
        for (int r = 0; r < 20; r++) {
          UnsafeRow a = row(rnd, in.subList(0, n1));
          UnsafeRow b = row(rnd, in.subList(n1, in.size()));
          JoinedRow joined = new JoinedRow(a, b);
          UnsafeRow got = concat.apply(a, b, joined);
          same(proj.apply(joined), got, out);
        }
        // not two UnsafeRows (a padded row): the caller projects
        Check.equal(null, concat.apply(row(rnd, in.subList(0, n1)),
            new GenericInternalRow(n2), new JoinedRow()), "a generic row is refused");
      }
    });
    c.test("RowConcat: an output that is not every input in order is refused", () -> {
      List<Attribute> in = List.of(attr(0, LongType$.MODULE$), attr(1, StringType$.MODULE$),
          attr(2, LongType$.MODULE$));
      Check.equal(null, RowConcat.of(Scala.seq(List.<Expression>of(in.get(1), in.get(0), in.get(2))),
          Scala.seq(in), 1), "reordered");
      Check.equal(null, RowConcat.of(Scala.seq(List.<Expression>of(in.get(0), in.get(1))),
          Scala.seq(in), 1), "a column left out");
      Check.equal(null, RowConcat.of(Scala.seq(List.<Expression>of(in.get(0),
          Literal.create(1L, LongType$.MODULE$), in.get(2))), Scala.seq(in), 1), "a computed column among the inputs");
    });
  }
}
