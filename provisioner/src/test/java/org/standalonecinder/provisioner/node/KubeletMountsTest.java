package org.standalonecinder.provisioner.node;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class KubeletMountsTest {

  private static final String POD = "/var/lib/kubelet/pods/0f1e2d3c-aaaa-bbbb-cccc-000000000001";

  static Stream<Arguments> tables() {
    return Stream.of(
        Arguments.of(
            "an iSCSI PV mounted for a Pod",
            "612 29 8:16 / "
                + POD
                + "/volumes/kubernetes.io~iscsi/pvc-1 rw,relatime shared:301 - ext4 /dev/sdb"
                + " rw\n",
            List.of(
                new KubeletMounts.Mount(
                    "pvc-1",
                    "iscsi",
                    "0f1e2d3c-aaaa-bbbb-cccc-000000000001",
                    POD + "/volumes/kubernetes.io~iscsi/pvc-1",
                    "/dev/sdb",
                    "8:16",
                    "ext4"))),
        Arguments.of(
            "an RBD PV with no optional fields, under another kubelet root",
            "70 29 251:0 / /data/kubelet/pods/u1/volumes/kubernetes.io~rbd/pvc-2 rw - xfs"
                + " /dev/rbd0 rw,attr2\n",
            List.of(
                new KubeletMounts.Mount(
                    "pvc-2",
                    "rbd",
                    "u1",
                    "/data/kubelet/pods/u1/volumes/kubernetes.io~rbd/pvc-2",
                    "/dev/rbd0",
                    "251:0",
                    "xfs"))),
        Arguments.of(
            "a mount point with a space, as the kernel escapes it",
            "71 29 8:32 / /var/lib/my\\040kubelet/pods/u2/volumes/kubernetes.io~fc/pvc-3 rw"
                + " shared:1 master:2 - ext4 /dev/sdc rw\n",
            List.of(
                new KubeletMounts.Mount(
                    "pvc-3",
                    "fc",
                    "u2",
                    "/var/lib/my kubelet/pods/u2/volumes/kubernetes.io~fc/pvc-3",
                    "/dev/sdc",
                    "8:32",
                    "ext4"))),
        Arguments.of(
            "the plugin's global mount, another plugin's volume, a file below a volume: none",
            String.join(
                "\n",
                "80 29 8:16 / /var/lib/kubelet/plugins/kubernetes.io/iscsi/iface-default/"
                    + "127.0.0.1:3260-iqn.x-lun-1 rw - ext4 /dev/sdb rw",
                "81 29 0:50 / " + POD + "/volumes/kubernetes.io~secret/token rw - tmpfs tmpfs rw",
                "82 29 8:16 / "
                    + POD
                    + "/volumes/kubernetes.io~iscsi/pvc-1/sub rw - ext4 /dev/sdb"
                    + " rw",
                "83 29 0:51 / "
                    + POD
                    + "/volumes/kubernetes.io~csi/pvc-9/mount rw - ext4 /dev/sdz"
                    + " rw"),
            List.of()),
        Arguments.of(
            "lines that are not mountinfo's: skipped",
            "garbage\n\n1 2 3\n84 29 8:16 / " + POD + "/volumes/kubernetes.io~iscsi/pvc-1 rw -\n",
            List.of()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("tables")
  void findsThePodVolumeMountsOfThePluginsThePvsUse(
      String name, String mountinfo, List<KubeletMounts.Mount> expected) {
    assertThat(KubeletMounts.parse(mountinfo)).isEqualTo(expected);
  }

  @Test
  void findsThePodsRawBlockVolumesByTheKubeletsLinks(@TempDir Path kubelet) throws IOException {
    Path iscsi =
        Files.createDirectories(kubelet.resolve("pods/u1/volumeDevices/kubernetes.io~iscsi"));
    Files.createSymbolicLink(iscsi.resolve("pvc-1"), Path.of("/dev/null"));
    Files.createSymbolicLink(iscsi.resolve("pvc-gone"), kubelet.resolve("no-such-device"));
    Path csi = Files.createDirectories(kubelet.resolve("pods/u2/volumeDevices/kubernetes.io~csi"));
    Files.createSymbolicLink(csi.resolve("pvc-9"), Path.of("/dev/null"));
    Files.createDirectories(kubelet.resolve("pods/u3/volumes/kubernetes.io~iscsi/pvc-3"));

    assertThat(KubeletMounts.devices(kubelet))
        .as("the link to a device (here /dev/null, 1:3); not a dangling one, not another plugin's")
        .containsExactly(
            new KubeletMounts.Mount(
                "pvc-1", "iscsi", "u1", iscsi.resolve("pvc-1").toString(), "/dev/null", "1:3", ""));
    assertThat(KubeletMounts.devices(kubelet.resolve("no-kubelet-here"))).isEmpty();
  }
}
