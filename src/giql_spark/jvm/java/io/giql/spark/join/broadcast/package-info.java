/**
 * The broadcast interval join: the small side is built into an interval index once, broadcast,
 * and probed by every task of the large side ({@code join.probe}).
 */
package io.giql.spark.join.broadcast;
