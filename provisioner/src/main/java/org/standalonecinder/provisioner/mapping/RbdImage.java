package org.standalonecinder.provisioner.mapping;

import java.util.ArrayList;
import java.util.List;
import org.standalonecinder.provisioner.cinder.ConnectionInfo;

/**
 * The RBD image a Cinder {@code rbd} export names, checked: {@code name} is pool/image, the
 * monitors come from {@code hosts} and {@code ports}, and the volume is not encrypted. PVs and the
 * host's {@code rbd device map} are both made from it.
 *
 * @param pool the Ceph pool
 * @param image the image in it
 * @param monitors {@code host:port} per monitor, IPv6 addresses in brackets
 * @param user the Ceph user Cinder named ({@code auth_username}), or null
 * @param auth whether Ceph requires cephx ({@code auth_enabled})
 */
public record RbdImage(
    String pool, String image, List<String> monitors, String user, boolean auth) {

  public RbdImage {
    monitors = List.copyOf(monitors);
  }

  /**
   * The image of an export.
   *
   * @throws UnmappableExportException when the export lacks or garbles what names the image, or the
   *     volume is encrypted
   */
  public static RbdImage of(ConnectionInfo info) {
    String name = info.string("name");
    List<String> missing = new ArrayList<>();
    if (blank(name)) {
      missing.add("name");
    }
    List<String> hosts = strings(info.data().get("hosts"));
    if (hosts.isEmpty()) {
      missing.add("hosts");
    }
    if (!missing.isEmpty()) {
      throw new UnmappableExportException(
          "Cinder's RBD connection info lacks "
              + String.join(", ", missing)
              + ": the backend's driver did not export the volume");
    }
    String[] poolImage = name.split("/", -1);
    if (poolImage.length != 2 || blank(poolImage[0]) || blank(poolImage[1])) {
      throw new UnmappableExportException(
          "Cinder's RBD connection info names image '" + name + "', not pool/image");
    }
    List<String> monitors = monitors(hosts, strings(info.data().get("ports")));
    if (Boolean.TRUE.equals(info.data().get("encrypted"))) {
      throw new UnmappableExportException(
          "the volume is encrypted; Kubernetes' RBD plugins cannot open Cinder's LUKS volumes:"
              + " use a volume type without encryption");
    }
    String user = info.string("auth_username");
    if (!blank(user)) {
      ExportNames.ceph("Ceph user", user);
    }
    return new RbdImage(
        ExportNames.ceph("Ceph pool", poolImage[0]),
        ExportNames.ceph("RBD image", poolImage[1]),
        monitors,
        blank(user) ? null : user,
        truthy(info.data().get("auth_enabled")));
  }

  /** {@code pool/image}, as the rbd tool names it. */
  public String spec() {
    return pool + "/" + image;
  }

  /** {@code host:port} per monitor; IPv6 addresses in brackets; Ceph's port when none is given. */
  private static List<String> monitors(List<String> hosts, List<String> ports) {
    if (!ports.isEmpty() && ports.size() != hosts.size()) {
      throw new UnmappableExportException(
          "Cinder's RBD connection info names "
              + hosts.size()
              + " monitor hosts but "
              + ports.size()
              + " ports: "
              + hosts
              + " "
              + ports);
    }
    List<String> out = new ArrayList<>();
    for (int i = 0; i < hosts.size(); i++) {
      String host = hosts.get(i).trim();
      String port = ports.isEmpty() ? "6789" : ports.get(i).trim();
      if (!port.matches("[0-9]{1,5}")
          || Integer.parseInt(port) < 1
          || Integer.parseInt(port) > 65535) {
        throw new UnmappableExportException(
            "Cinder's RBD connection info names monitor port '" + port + "', not a port number");
      }
      if (host.contains(":") && !host.startsWith("[")) {
        host = "[" + host + "]";
      }
      out.add(ExportNames.monitorHost(host) + ":" + port);
    }
    return out;
  }

  private static List<String> strings(Object raw) {
    List<String> out = new ArrayList<>();
    if (raw instanceof List<?> list) {
      for (Object o : list) {
        if (o != null && !o.toString().isBlank()) {
          out.add(o.toString());
        }
      }
    } else if (raw != null && !raw.toString().isBlank()) {
      out.add(raw.toString());
    }
    return out;
  }

  private static boolean truthy(Object raw) {
    return raw instanceof Boolean b ? b : raw != null && "true".equalsIgnoreCase(raw.toString());
  }

  private static boolean blank(String s) {
    return s == null || s.isBlank();
  }
}
