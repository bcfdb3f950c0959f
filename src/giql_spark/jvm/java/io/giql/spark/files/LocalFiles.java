package io.giql.spark.files;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;

import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.io.nativeio.NativeIO;

/**
 * Hadoop's checksummed local file system ({@code fs.file.impl}) whose permissions are set in
 * the JVM rather than by a {@code chmod} process per file. Everything else is Hadoop's.
 */
public class LocalFiles extends LocalFileSystem {
  public LocalFiles() {
    super(new Raw());
  }

  /** Hadoop's raw local file system, but for how a file's permission bits are set. */
  public static class Raw extends RawLocalFileSystem {
    @Override
    public void setPermission(Path p, FsPermission permission) throws IOException {
      // With the native library Hadoop calls chmod(2) itself; a sticky bit has no java.nio form.
      if (NativeIO.isAvailable() || permission.getStickyBit()) {
        super.setPermission(p, permission);
        return;
      }
      String bits = permission.getUserAction().SYMBOL + permission.getGroupAction().SYMBOL
          + permission.getOtherAction().SYMBOL;
      try {
        Files.setPosixFilePermissions(pathToFile(p).toPath(), PosixFilePermissions.fromString(bits));
      } catch (UnsupportedOperationException e) {  // a file system without POSIX permissions
        super.setPermission(p, permission);
      }
    }
  }
}
