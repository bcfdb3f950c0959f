package io.giql.spark.files;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.spark.sql.SparkSession;

import io.giql.spark.compat.Sessions;

/**
 * Files at any URI the session's Hadoop file systems open, for Python on the driver (through
 * py4j): a file's size and modification time, byte ranges of it (the planner's Parquet footers
 * and samples), a folder's files, and the few operations a writer finishes with. The session's
 * Hadoop configuration is used as Spark's readers use it, so the cluster's credentials and mount
 * tables apply, nothing configured twice. A few opened streams are kept, so that the ranges read
 * from one file cost one open (on an object store, a round trip).
 */
public final class RemoteFiles {
  private static final int KEPT = 16;
  private static final Map<String, FSDataInputStream> OPEN = new LinkedHashMap<>(KEPT, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, FSDataInputStream> e) {
      if (size() <= KEPT) return false;
      try {
        e.getValue().close();
      } catch (IOException ignored) {
        // a stream that will not close is dropped all the same
      }
      return true;
    }
  };

  private RemoteFiles() {}

  static Configuration conf() {
    return Sessions.classic(SparkSession.active()).sessionState().newHadoopConf();
  }

  private static FileSystem fs(Path p) throws IOException {
    return p.getFileSystem(conf());
  }

  /** Whether the session's Hadoop has a file system for {@code scheme}. */
  public static boolean hasScheme(String scheme) {
    try {
      FileSystem.getFileSystemClass(scheme, conf());
      return true;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /** {@code [size, modification time (ms), 1 if a folder]}, or null when nothing is there. */
  public static long[] status(String path) throws IOException {
    Path p = new Path(path);
    try {
      FileStatus st = fs(p).getFileStatus(p);
      return new long[] {st.getLen(), st.getModificationTime(), st.isDirectory() ? 1 : 0};
    } catch (FileNotFoundException e) {
      return null;
    }
  }

  /** The bytes {@code [pos, pos + len)} of the file (fewer at its end). */
  public static byte[] read(String path, long pos, int len) throws IOException {
    synchronized (OPEN) {
      FSDataInputStream in = OPEN.get(path);
      Path p = new Path(path);
      if (in == null) {
        in = fs(p).open(p);
        OPEN.put(path, in);
      }
      long size = fs(p).getFileStatus(p).getLen();
      int n = (int) Math.max(0, Math.min(len, size - pos));
      byte[] out = new byte[n];
      in.readFully(pos, out, 0, n);
      return out;
    }
  }

  /** Forgets the open stream of {@code path} (after the file changed). */
  public static void forget(String path) throws IOException {
    synchronized (OPEN) {
      FSDataInputStream in = OPEN.remove(path);
      if (in != null) in.close();
    }
  }

  /** The data files under {@code path}, recursively (not those starting with '_' or '.'), or the file itself. */
  public static String[] list(String path) throws IOException {
    Path p = new Path(path);
    FileSystem fs = fs(p);
    FileStatus st = fs.getFileStatus(p);
    List<String> out = new ArrayList<>();
    if (!st.isDirectory()) return new String[] {st.getPath().toString()};
    RemoteIterator<LocatedFileStatus> it = fs.listFiles(p, true);
    while (it.hasNext()) {
      LocatedFileStatus f = it.next();
      String rel = f.getPath().toString().substring(st.getPath().toString().length());
      boolean hidden = false;
      for (String part : rel.split("/")) {
        if (part.startsWith("_") || part.startsWith(".")) hidden = true;
      }
      if (!hidden) out.add(f.getPath().toString());
    }
    java.util.Collections.sort(out);
    return out.toArray(new String[0]);
  }

  public static boolean delete(String path) throws IOException {
    forget(path);
    Path p = new Path(path);
    return fs(p).delete(p, true);
  }

  public static boolean rename(String from, String to) throws IOException {
    Path a = new Path(from);
    return fs(a).rename(a, new Path(to));
  }

  public static boolean mkdirs(String path) throws IOException {
    Path p = new Path(path);
    return fs(p).mkdirs(p);
  }

  /** Copies a local file to {@code path} (replacing it). */
  public static void upload(String local, String path) throws IOException {
    Path p = new Path(path);
    fs(p).copyFromLocalFile(false, true, new Path(local), p);
  }
}
