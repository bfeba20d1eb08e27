package org.standalonecinder.provisioner.cinder;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The host-side description Cinder needs to export a volume (os-brick's "connector").
 *
 * <p>Without Nova there is no compute host: the provisioner sends one cluster-wide initiator, and
 * the same initiator name goes into the PersistentVolume so that nodes can log in.
 *
 * @param initiator the iSCSI initiator IQN
 * @param host a host name for Cinder's records
 * @param ip an address for Cinder's records (some drivers use it for access lists)
 * @param multipath whether to ask for all portals
 * @param wwpns the Fibre Channel port names of the nodes' HBAs (16 hex digits), empty without FC
 * @param wwnns their node names
 */
public record Connector(
    String initiator,
    String host,
    String ip,
    boolean multipath,
    java.util.List<String> wwpns,
    java.util.List<String> wwnns) {

  /** Without Fibre Channel. */
  public Connector(String initiator, String host, String ip, boolean multipath) {
    this(initiator, host, ip, multipath, java.util.List.of(), java.util.List.of());
  }

  public Connector {
    wwpns = wwpns == null ? java.util.List.of() : java.util.List.copyOf(wwpns);
    wwnns = wwnns == null ? java.util.List.of() : java.util.List.copyOf(wwnns);
    Objects.requireNonNull(initiator, "initiator");
    // Cinder accepts an empty initiator and exports a target no node can log into.
    if (initiator.isBlank()) {
      throw new IllegalArgumentException("the connector needs an initiator name (an iSCSI IQN)");
    }
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(ip, "ip");
  }

  /** The connector as Cinder's API expects it. */
  public Map<String, Object> toApi() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("initiator", initiator);
    m.put("host", host);
    m.put("ip", ip);
    m.put("multipath", multipath);
    m.put("platform", platform(System.getProperty("os.arch", "")));
    m.put("os_type", "linux2");
    // FC drivers zone and map the volume to these; without them they refuse or export nothing.
    if (!wwpns.isEmpty()) {
      m.put("wwpns", wwpns);
    }
    if (!wwnns.isEmpty()) {
      m.put("wwnns", wwnns);
    }
    // Never let Cinder try to attach on its own host.
    m.put("do_local_attach", false);
    return m;
  }

  /**
   * The machine name os-brick would report ({@code uname -m}) for a JVM architecture: the JVM says
   * {@code amd64} where Linux says {@code x86_64}, and {@code x86} for any 32-bit Intel machine.
   * Some drivers choose the export by it, so a guess would be worse than the host's own word.
   */
  static String platform(String osArch) {
    return switch (osArch) {
      case "amd64", "x86_64" -> "x86_64";
      case "x86", "i386", "i486", "i586", "i686" -> "i686";
      case "arm64" -> "aarch64";
      default -> osArch;
    };
  }
}
