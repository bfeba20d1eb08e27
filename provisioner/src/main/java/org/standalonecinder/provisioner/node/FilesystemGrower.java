package org.standalonecinder.provisioner.node;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.function.ToLongFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.standalonecinder.provisioner.host.Command;
import org.standalonecinder.provisioner.host.Host;
import org.standalonecinder.provisioner.host.HostException;

/**
 * Grows a mounted filesystem to the size of its device, online, as a CSI node plugin's expansion
 * does: it has the kernel read the device's size again (a SCSI rescan for iSCSI and FC, a header
 * refresh for RBD), then grows ext2/3/4 with {@code resize2fs} and xfs with {@code xfs_growfs}.
 * Safe to repeat: a filesystem that fills its device already is left as it is (both tools say
 * "nothing to do").
 */
public final class FilesystemGrower {

  private static final Set<String> EXT = Set.of("ext2", "ext3", "ext4");
  private static final Pattern RBD = Pattern.compile("rbd([0-9]+)");

  private final Host host;
  private final Path root;
  private final ToLongFunction<String> filesystemBytes;

  /**
   * @param host runs the growing tools
   * @param root where {@code sys} is ({@code /}; tests lay out their own)
   * @param filesystemBytes the size of the filesystem mounted at a path
   */
  public FilesystemGrower(Host host, Path root, ToLongFunction<String> filesystemBytes) {
    this.host = host;
    this.root = root;
    this.filesystemBytes = filesystemBytes;
  }

  /** This machine. */
  public static FilesystemGrower machine(Host host) {
    return new FilesystemGrower(host, Path.of("/"), FilesystemGrower::statfs);
  }

  /**
   * What a growth did: the device's and the filesystem's sizes before and after, in bytes.
   *
   * @param rescanned how the kernel was made to read the device's size again, or why not
   */
  public record Grown(
      KubeletMounts.Mount mount,
      String rescanned,
      long deviceBefore,
      long device,
      long filesystemBefore,
      long filesystem) {

    /** Whether the filesystem is bigger now. */
    public boolean grew() {
      return filesystem > filesystemBefore;
    }
  }

  /**
   * Rescans the mount's device and grows its filesystem to fill it.
   *
   * @throws HostException when the device or filesystem cannot be grown here: a partition, a
   *     filesystem other than ext2/3/4 and xfs, a tool that is missing or fails
   */
  public Grown grow(KubeletMounts.Mount mount) {
    Path sys = device(mount);
    Command tool = tool(mount);
    long deviceBefore = sectors(sys) * 512;
    String rescanned = rescan(sys);
    long device = sectors(sys) * 512;
    long before = filesystemBytes.applyAsLong(mount.mountPoint());
    Host.Result r = host.run(tool);
    if (!tool.done(r.exit())) {
      throw new HostException(
          "'" + tool.shown() + "' failed (exit " + r.exit() + "): " + r.output());
    }
    return new Grown(
        mount,
        rescanned,
        deviceBefore,
        device,
        before,
        filesystemBytes.applyAsLong(mount.mountPoint()));
  }

  /**
   * Has the kernel read the mount's device's size again (no process is started for it), and returns
   * that size in bytes. For a raw block volume (no {@code fsType}) that is all there is to do: a
   * Pod sees the device's new size.
   *
   * @throws HostException as {@link #grow}
   */
  public long rescan(KubeletMounts.Mount mount) {
    Path sys = device(mount);
    if (!mount.fsType().isEmpty()) {
      // refused before anything is done, as grow would refuse it
      tool(mount);
    }
    rescan(sys);
    return sectors(sys) * 512;
  }

  /** The device's folder in sysfs, if it is one this grows. */
  private Path device(KubeletMounts.Mount mount) {
    Path sys = root.resolve("sys/dev/block").resolve(mount.majorMinor());
    if (!Files.isDirectory(sys)) {
      throw new HostException(
          "no block device " + mount.majorMinor() + " (" + mount.device() + ") on this host");
    }
    if (Files.exists(sys.resolve("partition"))) {
      // A partition table is the user's: growing it is theirs to decide.
      throw new HostException(
          mount.device() + " is a partition; grow the partition first, then the filesystem");
    }
    return sys;
  }

  private static Command tool(KubeletMounts.Mount mount) {
    if (EXT.contains(mount.fsType())) {
      return Command.of("resize2fs", mount.device());
    }
    if ("xfs".equals(mount.fsType())) {
      // xfs grows through its mount point, not its device.
      return Command.of("xfs_growfs", mount.mountPoint());
    }
    throw new HostException(
        "cannot grow "
            + mount.fsType()
            + " filesystems online (ext2, ext3, ext4 and xfs can be): "
            + mount.mountPoint());
  }

  /** Has the kernel read the device's size again; says how, or why not. */
  private String rescan(Path sys) {
    Path scsi = sys.resolve("device/rescan");
    if (Files.exists(scsi)) {
      write(scsi);
      return "SCSI rescan";
    }
    Matcher rbd = RBD.matcher(name(sys));
    if (rbd.matches()) {
      Path refresh = root.resolve("sys/bus/rbd/devices").resolve(rbd.group(1)).resolve("refresh");
      if (Files.exists(refresh)) {
        write(refresh);
        return "RBD header refresh";
      }
    }
    return "no rescan known for " + name(sys) + "; its size as the kernel has it";
  }

  private static String name(Path sys) {
    try {
      return sys.toRealPath().getFileName().toString();
    } catch (IOException e) {
      return sys.getFileName().toString();
    }
  }

  private static void write(Path file) {
    try {
      Files.writeString(file, "1");
    } catch (IOException e) {
      throw new HostException("cannot write " + file + " (needs root): " + e.getMessage(), e);
    }
  }

  private static long sectors(Path sys) {
    try {
      return Long.parseLong(Files.readString(sys.resolve("size")).strip());
    } catch (IOException | NumberFormatException e) {
      throw new HostException("cannot read the size of " + sys + ": " + e.getMessage(), e);
    }
  }

  private static long statfs(String mountPoint) {
    try {
      return Files.getFileStore(Path.of(mountPoint)).getTotalSpace();
    } catch (IOException e) {
      throw new HostException("cannot read the filesystem at " + mountPoint + ": " + e, e);
    }
  }
}
