package org.standalonecinder.provisioner.mapping;

import java.util.regex.Pattern;

/**
 * What Cinder's connection info may name. Its values become PV fields a kubelet acts on as root,
 * and the attach command's device paths and arguments ({@code iscsiadm -T}, {@code rbd device map
 * pool/image}, {@code /dev/rbd/pool/image}): a hostile or broken Cinder answer must not name a path
 * outside them ({@code ../sda}), an option ({@code -o}), or anything a shell or a path could read
 * two ways. Each check throws {@link UnmappableExportException} saying what was refused.
 */
final class ExportNames {

  // RFC 3720's iqn., eui. and naa. forms; no '/', space or leading '-'.
  private static final Pattern IQN =
      Pattern.compile(
          "iqn\\.[0-9]{4}-[0-9]{2}\\.[A-Za-z0-9][A-Za-z0-9.-]*(:[A-Za-z0-9._:,-]+)?"
              + "|eui\\.[0-9A-Fa-f]{16}|naa\\.[0-9A-Fa-f]{16}([0-9A-Fa-f]{16})?");
  private static final Pattern HOST =
      Pattern.compile("[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?|\\[[0-9A-Fa-f:.]+\\]");
  // Ceph pool, namespace, image and user names as Cinder makes them; never "." or "..".
  private static final Pattern CEPH = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.+@-]*");

  private ExportNames() {}

  static String iqn(String v) {
    if (v == null || v.length() > 223 || !IQN.matcher(v).matches()) {
      throw refused("iSCSI target", v, "an iqn., eui. or naa. name");
    }
    return v;
  }

  /** {@code host:port}, the host a name or an address (IPv6 in brackets). */
  static String portal(String v) {
    int colon = v == null ? -1 : v.lastIndexOf(':');
    if (colon <= 0
        || v.length() > 300
        || !HOST.matcher(v.substring(0, colon)).matches()
        || !port(v.substring(colon + 1))) {
      throw refused("iSCSI portal", v, "host:port");
    }
    return v;
  }

  static int lun(int v) {
    if (v < 0 || v > 16383) {
      throw refused("iSCSI LUN", String.valueOf(v), "a LUN from 0 to 16383");
    }
    return v;
  }

  static String monitorHost(String v) {
    if (v == null || v.length() > 300 || !HOST.matcher(v).matches()) {
      throw refused("Ceph monitor host", v, "a host name or an address");
    }
    return v;
  }

  /** A Ceph pool, image or user name. */
  static String ceph(String what, String v) {
    if (v == null || v.length() > 255 || !CEPH.matcher(v).matches() || v.matches("\\.+")) {
      throw refused(what, v, "a Ceph name (letters, digits, _ . + @ -, not starting with . or -)");
    }
    return v;
  }

  private static boolean port(String p) {
    return p.matches("[0-9]{1,5}") && Integer.parseInt(p) >= 1 && Integer.parseInt(p) <= 65535;
  }

  private static UnmappableExportException refused(String what, String v, String expected) {
    return new UnmappableExportException(
        "Cinder's connection info names "
            + what
            + " '"
            + abbreviate(v)
            + "', which is not "
            + expected
            + ": refused, nothing on a node or host would be safe to make of it");
  }

  private static String abbreviate(String v) {
    if (v == null) {
      return "null";
    }
    String printable = v.replaceAll("\\p{Cntrl}", "?");
    return printable.length() > 80 ? printable.substring(0, 80) + "…" : printable;
  }
}
