/**
 * The sweep interval join of two sides co-partitioned by key (and, for wide keys, by tile), and
 * the tiling ({@code TileExpandExec}) that copies each row to the tiles it reaches.
 */
package io.giql.spark.join.sweep;
