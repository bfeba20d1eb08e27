package org.standalonecinder.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The API server's TCP connections to the webhook, read from the kernel's socket table, and when
 * each ends. Which side closed cannot be read afterwards (the API server's socket is often reset
 * rather than left in TIME_WAIT, as the webhook's TLS close_notify reaches a socket already
 * closed), so the time tells: the API server drops an unused connection after 90 s, the webhook
 * only after its idle deadline (120 s).
 */
final class ApiServerConnections {

  private static final String ESTABLISHED = "01";

  /** One row of /proc/net/tcp: both ends on loopback, so the ports tell them apart. */
  record Socket(int localPort, int remotePort, String state, long inode) {}

  /** When a watched connection ended, after the review; -1 if it did not. */
  record Closed(int apiServerPort, long afterMillis) {}

  private final int webhookPort;
  private final Set<Integer> ports;
  private final long since;

  private ApiServerConnections(int webhookPort, Set<Integer> ports) {
    this.webhookPort = webhookPort;
    this.ports = ports;
    this.since = System.nanoTime();
  }

  /** The API server's connections to the webhook now: call right after a review it sent. */
  static ApiServerConnections now(int webhookPort) {
    Set<Long> inodes = socketInodes(apiServerPid());
    Set<Integer> ports = new HashSet<>();
    for (Socket s : sockets()) {
      if (s.remotePort() == webhookPort
          && s.state().equals(ESTABLISHED)
          && inodes.contains(s.inode())) {
        ports.add(s.localPort());
      }
    }
    return new ApiServerConnections(webhookPort, ports);
  }

  Set<Integer> ports() {
    return ports;
  }

  /** Waits until every watched connection is gone, and tells when each went. */
  List<Closed> awaitClosed(Duration within) throws InterruptedException {
    List<Closed> closed = new ArrayList<>();
    Set<Integer> open = new HashSet<>(ports);
    long deadline = since + within.toNanos();
    while (!open.isEmpty() && System.nanoTime() < deadline) {
      Set<Integer> established = new HashSet<>();
      for (Socket s : sockets()) {
        if (s.remotePort() == webhookPort && s.state().equals(ESTABLISHED)) {
          established.add(s.localPort());
        }
      }
      for (Integer port : List.copyOf(open)) {
        if (!established.contains(port)) {
          open.remove(port);
          closed.add(new Closed(port, (System.nanoTime() - since) / 1_000_000));
        }
      }
      Thread.sleep(250);
    }
    for (Integer port : open) {
      closed.add(new Closed(port, -1));
    }
    return closed;
  }

  private static long apiServerPid() {
    try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
      return procs
          .filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit))
          .filter(
              p -> {
                try {
                  return Files.readString(p.resolve("comm")).trim().equals("kube-apiserver");
                } catch (IOException e) {
                  return false;
                }
              })
          .mapToLong(p -> Long.parseLong(p.getFileName().toString()))
          .findFirst()
          .orElseThrow(() -> new IllegalStateException("no kube-apiserver process here"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Set<Long> socketInodes(long pid) {
    Set<Long> inodes = new HashSet<>();
    try (Stream<Path> fds = Files.list(Path.of("/proc", Long.toString(pid), "fd"))) {
      fds.forEach(
          fd -> {
            try {
              String target = Files.readSymbolicLink(fd).toString();
              if (target.startsWith("socket:[")) {
                inodes.add(Long.parseLong(target.substring(8, target.length() - 1)));
              }
            } catch (IOException e) {
              // closed meanwhile
            }
          });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return inodes;
  }

  static List<Socket> sockets() {
    List<Socket> all = new ArrayList<>();
    for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
      List<String> lines;
      try {
        lines = Files.readAllLines(Path.of(table));
      } catch (IOException e) {
        continue;
      }
      for (String line : lines.subList(1, lines.size())) {
        String[] f = line.trim().split("\\s+");
        all.add(new Socket(port(f[1]), port(f[2]), f[3], Long.parseLong(f[9])));
      }
    }
    return all;
  }

  private static int port(String address) {
    return Integer.parseInt(address.substring(address.indexOf(':') + 1), 16);
  }
}
