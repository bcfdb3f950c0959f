package io.giql.spark.columns;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.expressions.codegen.GenerateUnsafeRowJoiner;
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowJoiner;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

import io.giql.spark.compat.Scala;

/**
 * A pair's output row made by copying the two input rows' bytes side by side, for an output that
 * is every column of both rows in order, then any computed columns (a k-nearest join's distance).
 *
 * <p>The projection it replaces reads each field back out of the two rows, a string as a new
 * {@code UTF8String}, and writes it again: a fifth of a k-nearest join's time. Spark's row joiner
 * copies the null bits, the fixed-width words and the variable-length bytes in blocks and shifts
 * the offsets. Only two {@link UnsafeRow}s can be joined this way; {@link #apply} returns null for
 * anything else (a padded row's NULL side), and the caller projects as before.
 */
public final class RowConcat {
  private final UnsafeRowJoiner both;
  private final UnsafeProjection extra;  // the computed columns over the joined input, or null
  private final UnsafeRowJoiner withExtra;

  private RowConcat(UnsafeRowJoiner both, UnsafeProjection extra, UnsafeRowJoiner withExtra) {
    this.both = both;
    this.extra = extra;
    this.withExtra = withExtra;
  }

  /**
   * The concatenation for {@code output} over {@code input} (the first row's {@code first}
   * columns, then the second's), or null when {@code output} does not start with every input
   * column, in order and of the same type.
   */
  public static RowConcat of(scala.collection.Seq<Expression> output, scala.collection.Seq<Attribute> input,
      int first) {
    List<Expression> out = Scala.list(output);
    List<Attribute> in = Scala.list(input);
    if (out.size() < in.size() || first < 0 || first > in.size()) return null;
    for (int i = 0; i < in.size(); i++) {
      Expression e = out.get(i);
      if (!(e instanceof Attribute)) return null;
      Attribute a = (Attribute) e;
      if (!a.exprId().equals(in.get(i).exprId()) || !a.dataType().sameType(in.get(i).dataType())) {
        return null;
      }
    }
    UnsafeRowJoiner both = GenerateUnsafeRowJoiner.create(schema(in.subList(0, first)),
        schema(in.subList(first, in.size())));
    List<Expression> rest = out.subList(in.size(), out.size());
    if (rest.isEmpty()) return new RowConcat(both, null, null);
    UnsafeProjection extra = UnsafeProjection.create(Scala.seq(rest), Scala.imm(input));
    return new RowConcat(both, extra, GenerateUnsafeRowJoiner.create(schema(in), schema(rest)));
  }

  /** The output row for {@code joined} = ({@code a}, {@code b}), or null when either is not an {@link UnsafeRow}. */
  public UnsafeRow apply(InternalRow a, InternalRow b, JoinedRow joined) {
    if (!(a instanceof UnsafeRow) || !(b instanceof UnsafeRow)) return null;
    UnsafeRow row = both.join((UnsafeRow) a, (UnsafeRow) b);
    return extra == null ? row : withExtra.join(row, extra.apply(joined));
  }

  private static StructType schema(List<? extends Expression> exprs) {
    List<StructField> fields = new ArrayList<>();
    for (Expression e : exprs) {
      fields.add(new StructField("c" + fields.size(), e.dataType(), true, Metadata.empty()));
    }
    return new StructType(fields.toArray(new StructField[0]));
  }
}
