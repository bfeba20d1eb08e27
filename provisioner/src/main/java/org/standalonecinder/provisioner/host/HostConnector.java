package org.standalonecinder.provisioner.host;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Stream;
import org.standalonecinder.provisioner.cinder.Connector;

/**
 * This host's connector, found where os-brick finds it: the iSCSI initiator name in {@code
 * /etc/iscsi/initiatorname.iscsi} (written when open-iscsi is installed), the Fibre Channel ports
 * in {@code /sys/class/fc_host/host*}/{@code port_name} and {@code node_name}, the host name and an
 * address. The file system root is a parameter so that tests can lay out a host of their own.
 */
public final class HostConnector {

  /** Where open-iscsi keeps the host's initiator name. */
  public static final String INITIATOR_FILE = "etc/iscsi/initiatorname.iscsi";

  private static final String FC_HOSTS = "sys/class/fc_host";

  private HostConnector() {}

  /**
   * The connector of the host whose file system is at {@code root}.
   *
   * @param host the host name to give Cinder
   * @param ip the address to give Cinder
   * @throws HostException when the host has no initiator name (open-iscsi is not installed or its
   *     file has none)
   */
  public static Connector discover(Path root, String host, String ip, boolean multipath) {
    List<String> wwpns = new ArrayList<>();
    List<String> wwnns = new ArrayList<>();
    for (String[] port : fcPorts(root)) {
      wwpns.add(port[0]);
      wwnns.add(port[1]);
    }
    String initiator =
        initiatorName(root)
            .orElseThrow(
                () ->
                    new HostException(
                        "this host has no iSCSI initiator name: /"
                            + INITIATOR_FILE
                            + " is missing or names none (install open-iscsi, which writes it"
                            + (wwpns.isEmpty()
                                ? ")"
                                : "; Fibre Channel ports alone are not enough here yet)")));
    return new Connector(initiator, host, ip, multipath, wwpns, wwnns);
  }

  /** The {@code InitiatorName=} of open-iscsi's file; comments and blank lines are skipped. */
  static Optional<String> initiatorName(Path root) {
    Path file = root.resolve(INITIATOR_FILE);
    if (!Files.isReadable(file)) {
      return Optional.empty();
    }
    try {
      for (String line : Files.readAllLines(file)) {
        String l = line.strip();
        if (l.startsWith("#") || !l.startsWith("InitiatorName=")) {
          continue;
        }
        String name = l.substring("InitiatorName=".length()).strip();
        if (!name.isEmpty()) {
          return Optional.of(name);
        }
      }
      return Optional.empty();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The port and node name of each FC host adapter, as Cinder wants them: 16 lower-case hex digits,
   * without the kernel's {@code 0x}. Adapters are taken in the order of their directory names; one
   * that lacks either name is left out, so the two lists Cinder gets stay paired.
   */
  static List<String[]> fcPorts(Path root) {
    Path dir = root.resolve(FC_HOSTS);
    if (!Files.isDirectory(dir)) {
      return List.of();
    }
    List<String[]> ports = new ArrayList<>();
    try (Stream<Path> hosts = Files.list(dir)) {
      for (Path h : hosts.sorted().toList()) {
        Optional<String> port = wwn(h.resolve("port_name"));
        Optional<String> node = wwn(h.resolve("node_name"));
        if (port.isPresent() && node.isPresent()) {
          ports.add(new String[] {port.get(), node.get()});
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return ports;
  }

  private static Optional<String> wwn(Path f) throws IOException {
    if (!Files.isReadable(f)) {
      return Optional.empty();
    }
    String v = Files.readString(f).strip().toLowerCase(Locale.ROOT);
    if (v.startsWith("0x")) {
      v = v.substring(2);
    }
    return v.matches("[0-9a-f]{16}") ? Optional.of(v) : Optional.empty();
  }

  /** This machine's name, as {@code hostname} prints it. */
  public static String hostName() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return "localhost";
    }
  }

  /**
   * An address of this machine for Cinder's records: the first IPv4 address of an interface that is
   * up and not loopback, else {@code 127.0.0.1}. Some drivers put it into the target's access list,
   * so {@code --ip} overrides it where the host has several networks.
   */
  public static String ip() {
    try {
      for (NetworkInterface n : Collections.list(NetworkInterface.getNetworkInterfaces())) {
        if (!n.isUp() || n.isLoopback()) {
          continue;
        }
        for (InetAddress a : Collections.list(n.getInetAddresses())) {
          if (a instanceof Inet4Address && !a.isLinkLocalAddress()) {
            return a.getHostAddress();
          }
        }
      }
    } catch (SocketException e) {
      // no interfaces to read: the loopback address below
    }
    return "127.0.0.1";
  }
}
