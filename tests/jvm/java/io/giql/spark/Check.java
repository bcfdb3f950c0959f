package io.giql.spark;

import java.util.Objects;

/** A minimal test harness: named checks, counted; a failed one prints why and is counted too. */
public final class Check {
  private int passed;
  private int failed;

  /** A test body; throws (an {@link AssertionError} or anything else) when it fails. */
  public interface Body {
    void run() throws Exception;
  }

  public void test(String name, Body body) {
    try {
      body.run();
      passed++;
      System.out.println("ok   " + name);
    } catch (Throwable t) {
      failed++;
      System.out.println("FAIL " + name + ": " + t);
      t.printStackTrace(System.out);
    }
  }

  public int passed() {
    return passed;
  }

  public int failed() {
    return failed;
  }

  public static void equal(Object expected, Object actual, String what) {
    if (!Objects.equals(expected, actual)) {
      throw new AssertionError(what + ": expected " + expected + ", got " + actual);
    }
  }

  public static void isTrue(boolean condition, String what) {
    if (!condition) throw new AssertionError(what);
  }
}
