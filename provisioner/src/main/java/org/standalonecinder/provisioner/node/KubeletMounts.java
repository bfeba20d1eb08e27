package org.standalonecinder.provisioner.node;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The filesystems the kubelet mounted for Pods from PVs of the kinds the provisioner makes (its
 * in-tree iSCSI, FC and RBD plugins), read from a mount table in {@code /proc/<pid>/mountinfo}'s
 * form. The host's table ({@code /proc/1/mountinfo}) is the one to read: a container's own may lack
 * the kubelet's mounts.
 */
public final class KubeletMounts {

  /**
   * One Pod's mount of a PV.
   *
   * @param pvName the PV's name (the last part of the kubelet's volume directory)
   * @param plugin {@code iscsi}, {@code fc} or {@code rbd}
   * @param podUid the Pod the kubelet mounted it for
   * @param mountPoint where it is mounted
   * @param device the mount's source, e.g. {@code /dev/sdb}
   * @param majorMinor the device's numbers, e.g. {@code 8:16}, as {@code /sys/dev/block} names it
   * @param fsType the filesystem, e.g. {@code ext4}
   */
  public record Mount(
      String pvName,
      String plugin,
      String podUid,
      String mountPoint,
      String device,
      String majorMinor,
      String fsType) {}

  // The kubelet's own layout, under whatever root it was given (--root-dir).
  private static final Pattern POD_VOLUME =
      Pattern.compile(".*/pods/([^/]+)/volumes/kubernetes\\.io~(iscsi|fc|rbd)/([^/]+)");

  private KubeletMounts() {}

  /** The Pod volume mounts of iSCSI, FC and RBD PVs in {@code mountinfo}, in its order. */
  public static List<Mount> parse(String mountinfo) {
    List<Mount> out = new ArrayList<>();
    for (String line : mountinfo.split("\n")) {
      // id parent major:minor root mount-point options [optional fields] - type source options
      String[] f = line.trim().split(" ");
      int dash = List.of(f).indexOf("-");
      if (f.length < 6 || dash < 6 || f.length < dash + 3) {
        continue;
      }
      String mountPoint = unescape(f[4]);
      Matcher m = POD_VOLUME.matcher(mountPoint);
      if (!m.matches()) {
        continue;
      }
      out.add(
          new Mount(
              m.group(3),
              m.group(2),
              m.group(1),
              mountPoint,
              unescape(f[dash + 2]),
              f[2],
              f[dash + 1]));
    }
    return out;
  }

  // The kubelet's link (or bind-mounted device node) for a Pod's raw block volume.
  private static final Pattern POD_DEVICE = Pattern.compile("kubernetes\\.io~(iscsi|fc|rbd)");

  /**
   * The raw block volumes ({@code volumeMode: Block}) the kubelet gave Pods from iSCSI, FC and RBD
   * PVs: {@code <kubeletDir>/pods/<uid>/volumeDevices/kubernetes.io~<plugin>/<pv>}, each a link to
   * (or a bind mount of) the device node. Their {@code fsType} is empty, their device the node the
   * link leads to.
   */
  public static List<Mount> devices(Path kubeletDir) {
    List<Mount> out = new ArrayList<>();
    try (Stream<Path> pods = list(kubeletDir.resolve("pods"))) {
      for (Path pod : pods.sorted().toList()) {
        try (Stream<Path> plugins = list(pod.resolve("volumeDevices"))) {
          for (Path plugin : plugins.sorted().toList()) {
            Matcher m = POD_DEVICE.matcher(plugin.getFileName().toString());
            if (!m.matches()) {
              continue;
            }
            try (Stream<Path> pvs = list(plugin)) {
              for (Path pv : pvs.sorted().toList()) {
                device(pv, m.group(1), pod.getFileName().toString()).ifPresent(out::add);
              }
            }
          }
        }
      }
    }
    return out;
  }

  private static Optional<Mount> device(Path pv, String plugin, String podUid) {
    try {
      long rdev = (Long) Files.getAttribute(pv, "unix:rdev");
      if (rdev == 0) {
        return Optional.empty();
      }
      // glibc's major() and minor() of a dev_t
      long major = ((rdev >>> 8) & 0xfff) | ((rdev >>> 32) & ~0xfffL);
      long minor = (rdev & 0xff) | ((rdev >>> 12) & ~0xffL);
      return Optional.of(
          new Mount(
              pv.getFileName().toString(),
              plugin,
              podUid,
              pv.toString(),
              pv.toRealPath().toString(),
              major + ":" + minor,
              ""));
    } catch (IOException | UnsupportedOperationException | ClassCastException e) {
      // gone while listed, or not a device: nothing to rescan
      return Optional.empty();
    }
  }

  private static Stream<Path> list(Path dir) {
    try {
      return Files.list(dir);
    } catch (IOException e) {
      return Stream.empty();
    }
  }

  /** The kernel writes space, tab, newline and backslash in paths as octal escapes. */
  static String unescape(String s) {
    if (s.indexOf('\\') < 0) {
      return s;
    }
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 3 < s.length() && s.substring(i + 1, i + 4).matches("[0-7]{3}")) {
        b.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
        i += 3;
      } else {
        b.append(c);
      }
    }
    return b.toString();
  }
}
