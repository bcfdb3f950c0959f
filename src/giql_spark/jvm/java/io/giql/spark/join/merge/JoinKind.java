package io.giql.spark.join.merge;

/** The join types the merge join runs. */
public enum JoinKind { INNER, LEFT, SEMI, ANTI }
