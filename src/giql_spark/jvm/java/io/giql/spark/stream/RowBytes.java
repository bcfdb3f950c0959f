package io.giql.spark.stream;

import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.Block;
import org.apache.spark.sql.catalyst.expressions.codegen.CodeBlock;
import org.apache.spark.sql.catalyst.expressions.codegen.JavaCode;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.types.BinaryType$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

import io.giql.spark.compat.GiqlExpression;
import io.giql.spark.compat.Scala;

import scala.collection.immutable.Seq;

/**
 * {@code giql_row_bytes(struct)}: a struct value as the bytes of its Spark row, and
 * {@code giql_row(bytes, 'schema json')}: those bytes as the struct again, without copying.
 *
 * <p>The stream operator carries rows through its state and output as these bytes: a row
 * joined to many others is then copied as bytes, not converted field by field for every pair.
 */
public final class RowBytes extends GiqlExpression implements java.io.Serializable {
  private static final long serialVersionUID = 1L;
  public static final String ENCODE = "giql_row_bytes";
  public static final String DECODE = "giql_row";
  private final Expression child;
  /** The struct type: the child's when encoding, the result's when decoding. */
  private final StructType type;
  private final boolean decode;
  private transient UnsafeProjection projection;

  private RowBytes(Expression child, StructType type, boolean decode) {
    this.child = child;
    this.type = type;
    this.decode = decode;
  }

  /** The builder of either function from its arguments. */
  public static Expression build(scala.collection.Seq<Expression> all, boolean decode) {
    List<Expression> args = Scala.list(all);
    if (!decode) {
      if (args.size() != 1) throw new IllegalArgumentException(ENCODE + " takes one struct argument");
      Expression c = args.get(0);
      if (!c.resolved()) return new RowBytes(c, null, false);
      if (!(c.dataType() instanceof StructType)) {
        throw new IllegalArgumentException(ENCODE + " takes a struct, not " + c.dataType().simpleString());
      }
      return new RowBytes(c, (StructType) c.dataType(), false);
    }
    if (args.size() != 2 || !(args.get(1) instanceof Literal)) {
      throw new IllegalArgumentException(DECODE + " takes the bytes and the struct type as a JSON literal");
    }
    String json = args.get(1).eval(null).toString();
    return new RowBytes(args.get(0), (StructType) DataType.fromJson(json), true);
  }

  private StructType structType() {
    return type != null ? type : (StructType) child.dataType();
  }

  @Override
  public Seq<Expression> children() {
    return Scala.seqOf(child);
  }

  @Override
  public boolean nullable() {
    return child.nullable();
  }

  @Override
  public DataType dataType() {
    return decode ? type : BinaryType$.MODULE$;
  }

  @Override
  public Object eval(InternalRow input) {
    Object v = child.eval(input);
    if (v == null) return null;
    if (decode) {
      byte[] b = (byte[]) v;
      UnsafeRow row = new UnsafeRow(type.size());
      row.pointTo(b, b.length);
      return row;
    }
    return encode((InternalRow) v);
  }

  /** The bytes of {@code row}, a value of the child struct type (generated code calls this). */
  public byte[] encode(InternalRow row) {
    if (projection == null) projection = UnsafeProjection.create(structType());
    return projection.apply(row).getBytes();
  }

  /**
   * Generated code: the child is generated too (an interpreted struct costs more than the
   * copy itself), and this expression is a reference object whose projection each task
   * makes once.
   */
  @Override
  public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
    ExprCode c = child.genCode(ctx);
    String isNull = ev.isNull().toString(), value = ev.value().toString();
    String body;
    if (decode) {
      body = "boolean " + isNull + " = " + c.isNull() + ";\n"
          + UnsafeRow.class.getName() + " " + value + " = null;\n"
          + "if (!" + isNull + ") {\n  " + value + " = new " + UnsafeRow.class.getName() + "("
          + type.size() + ");\n  " + value + ".pointTo(" + c.value() + ", " + c.value() + ".length);\n}\n";
    } else {
      String self = ctx.addReferenceObj("rowBytes", this, RowBytes.class.getName());
      body = "boolean " + isNull + " = " + c.isNull() + ";\n"
          + "byte[] " + value + " = " + isNull + " ? null : " + self + ".encode((" + InternalRow.class.getName()
          + ") " + c.value() + ");\n";
    }
    Block code = new CodeBlock(Scala.seqOf(c.code().toString() + "\n" + body), Scala.<JavaCode>seqOf());
    return ev.copy(code, ev.isNull(), ev.value());
  }

  @Override
  protected Expression withChildren(List<Expression> children) {
    Expression c = children.get(0);
    StructType t = decode ? type : (c.resolved() && c.dataType() instanceof StructType ? (StructType) c.dataType() : null);
    return new RowBytes(c, t, decode);
  }

  @Override
  public boolean resolved() {
    return child.resolved() && (decode || child.dataType() instanceof StructType);
  }

  @Override
  public String prettyName() {
    return decode ? DECODE : ENCODE;
  }

  @Override
  public String sql() {
    return decode ? DECODE + "(" + child.sql() + ", '" + type.json().replace("'", "\\'") + "')"
        : ENCODE + "(" + child.sql() + ")";
  }

  @Override
  public int productArity() {
    return 3;
  }

  @Override
  public Object productElement(int n) {
    switch (n) {
      case 0: return child;
      case 1: return type;
      case 2: return decode;
      default: throw new IndexOutOfBoundsException(String.valueOf(n));
    }
  }

  @Override
  public boolean canEqual(Object other) {
    return other instanceof RowBytes;
  }

  @Override
  public boolean equals(Object other) {
    if (!(other instanceof RowBytes)) return false;
    RowBytes o = (RowBytes) other;
    return decode == o.decode && child.equals(o.child) && java.util.Objects.equals(type, o.type);
  }

  @Override
  public int hashCode() {
    return 31 * child.hashCode() + (decode ? 1 : 0);
  }
}
