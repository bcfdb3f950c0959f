package io.giql.spark.join.probe;

/** What one pass of a probe over the streamed rows does. */
public enum ProbeMode { PAIRS, PAIRS_OR_PAD, SEMI, ANTI, MARK, COUNT }
