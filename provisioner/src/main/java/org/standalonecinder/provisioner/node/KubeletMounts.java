package org.standalonecinder.provisioner.node;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
