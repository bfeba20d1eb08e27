package org.standalonecinder.provisioner.node;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.provisioner.host.Host;
import org.standalonecinder.provisioner.host.HostException;

class FilesystemGrowerTest {

  private static final long GIB = 1L << 30;

  @TempDir Path root;

  private int toolExit = 0;
  private boolean grows = true;

  /** Records the commands run; the filesystem is 3 GiB once a growing tool ran with exit 0. */
  private final RecordingHost host =
      new RecordingHost(
          c -> new Host.Result(toolExit, toolExit == 0 ? "" : "resize2fs: Permission denied"));

  private final List<String> ran = host.ran;

  private FilesystemGrower grower;

  @BeforeEach
  void aNode() throws IOException {
    // an iSCSI disk (SCSI: a rescan attribute), 3 GiB as the kernel has it
    Path sdb = Files.createDirectories(root.resolve("sys/dev/block/8:16/device"));
    Files.writeString(sdb.resolve("rescan"), "");
    Files.writeString(sdb.resolveSibling("size"), String.valueOf(3 * GIB / 512));
    // a partition of it
    Path sdb1 = Files.createDirectories(root.resolve("sys/dev/block/8:17"));
    Files.writeString(sdb1.resolve("partition"), "1");
    Files.writeString(sdb1.resolve("size"), "2048");
    // an RBD mapping: /sys/dev/block's entry links to the device's directory
    Path rbd0 = Files.createDirectories(root.resolve("sys/devices/virtual/block/rbd0"));
    Files.writeString(rbd0.resolve("size"), String.valueOf(3 * GIB / 512));
    Files.createSymbolicLink(root.resolve("sys/dev/block/251:0"), rbd0);
    Path refresh = Files.createDirectories(root.resolve("sys/bus/rbd/devices/0"));
    Files.writeString(refresh.resolve("refresh"), "");
    // a loop device: no way known to have it read its size again
    Path loop = Files.createDirectories(root.resolve("sys/dev/block/7:0"));
    Files.writeString(loop.resolve("size"), String.valueOf(3 * GIB / 512));
    grower =
        new FilesystemGrower(
            host, root, mountPoint -> grows && !ran.isEmpty() && toolExit == 0 ? 3 * GIB : GIB);
  }

  private static KubeletMounts.Mount mount(String plugin, String dev, String numbers, String fs) {
    return new KubeletMounts.Mount(
        "pvc-1",
        plugin,
        "u1",
        "/var/lib/kubelet/pods/u1/volumes/kubernetes.io~" + plugin + "/pvc-1",
        dev,
        numbers,
        fs);
  }

  static Stream<Arguments> growths() {
    return Stream.of(
        Arguments.of(
            "ext4 on iSCSI: a SCSI rescan, then resize2fs of the device",
            mount("iscsi", "/dev/sdb", "8:16", "ext4"),
            "sys/dev/block/8:16/device/rescan",
            "SCSI rescan",
            "resize2fs /dev/sdb"),
        Arguments.of(
            "xfs on FC: a SCSI rescan, then xfs_growfs of the mount point",
            mount("fc", "/dev/sdb", "8:16", "xfs"),
            "sys/dev/block/8:16/device/rescan",
            "SCSI rescan",
            "xfs_growfs /var/lib/kubelet/pods/u1/volumes/kubernetes.io~fc/pvc-1"),
        Arguments.of(
            "ext4 on RBD: the image's header read again, then resize2fs",
            mount("rbd", "/dev/rbd0", "251:0", "ext4"),
            "sys/bus/rbd/devices/0/refresh",
            "RBD header refresh",
            "resize2fs /dev/rbd0"),
        Arguments.of(
            "ext3 on a device with no rescan known: grown to the size the kernel has",
            mount("iscsi", "/dev/loop0", "7:0", "ext3"),
            null,
            "no rescan known for 7:0; its size as the kernel has it",
            "resize2fs /dev/loop0"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("growths")
  void rescansThenGrowsTheFilesystem(
      String name, KubeletMounts.Mount mount, String rescanFile, String rescanned, String tool)
      throws IOException {
    FilesystemGrower.Grown g = grower.grow(mount);

    if (rescanFile != null) {
      assertThat(Files.readString(root.resolve(rescanFile))).isEqualTo("1");
    }
    assertThat(g.rescanned()).isEqualTo(rescanned);
    assertThat(ran).containsExactly(tool);
    assertThat(g.device()).isEqualTo(3 * GIB);
    assertThat(g.filesystemBefore()).isEqualTo(GIB);
    assertThat(g.filesystem()).isEqualTo(3 * GIB);
    assertThat(g.grew()).isTrue();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("growths")
  void aFilesystemThatFillsItsDeviceIsLeftAsItIs(
      String name, KubeletMounts.Mount mount, String rescanFile, String rescanned, String tool) {
    grows = false;

    FilesystemGrower.Grown g = grower.grow(mount);

    assertThat(g.grew()).isFalse();
    assertThat(ran).as("the tool is safe to repeat: it says there is nothing to do").hasSize(1);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("growths")
  void aRescanStartsNoProcessAndSaysTheDevicesSize(
      String name, KubeletMounts.Mount mount, String rescanFile, String rescanned, String tool)
      throws IOException {
    assertThat(grower.rescan(mount)).isEqualTo(3 * GIB);

    assertThat(ran).isEmpty();
    if (rescanFile != null) {
      assertThat(Files.readString(root.resolve(rescanFile))).isEqualTo("1");
    }
  }

  static Stream<Arguments> refusals() {
    return Stream.of(
        Arguments.of(
            "a partition: the user's table, not grown",
            mount("iscsi", "/dev/sdb1", "8:17", "ext4"),
            0,
            "/dev/sdb1 is a partition; grow the partition first, then the filesystem",
            false),
        Arguments.of(
            "btrfs: no online growth known",
            mount("iscsi", "/dev/sdb", "8:16", "btrfs"),
            0,
            "cannot grow btrfs filesystems online (ext2, ext3, ext4 and xfs can be): "
                + "/var/lib/kubelet/pods/u1/volumes/kubernetes.io~iscsi/pvc-1",
            false),
        Arguments.of(
            "a device the node does not have",
            mount("iscsi", "/dev/sdq", "65:0", "ext4"),
            0,
            "no block device 65:0 (/dev/sdq) on this host",
            false),
        Arguments.of(
            "the tool fails: its exit and words",
            mount("iscsi", "/dev/sdb", "8:16", "ext4"),
            1,
            "'resize2fs /dev/sdb' failed (exit 1): resize2fs: Permission denied",
            true));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("refusals")
  void whatCannotBeGrownIsSaid(
      String name, KubeletMounts.Mount mount, int exit, String message, boolean toolRan) {
    toolExit = exit;

    assertThatThrownBy(() -> grower.grow(mount))
        .isInstanceOf(HostException.class)
        .hasMessage(message);
    assertThat(ran.isEmpty()).isEqualTo(!toolRan);
  }
}
