package org.standalonecinder.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The API server's TCP connections to the webhook (found through the API server's own sockets), how
 * long each had been idle when found (the kernel's {@code lastsnd}/{@code lastrcv}, through {@code
 * ss}), and when each ends. Which side closed cannot be read afterwards (the API server's socket is
 * often reset rather than left in TIME_WAIT, as the webhook's TLS close_notify reaches a socket
 * already closed), so the time tells: the API server drops a connection unused for 90 s, the
 * webhook only after its idle deadline (120 s).
 */
final class ApiServerConnections {

  private static final String ESTABLISHED = "01";
  private static final Pattern SS_LINE =
      Pattern.compile(
          ":(\\d+)\\s+\\S*:(\\d+)\\b.*?lastsnd:(\\d+).*?lastrcv:(\\d+)", Pattern.DOTALL);

  /** One row of /proc/net/tcp: both ends on loopback, so the ports tell them apart. */
  record Socket(int localPort, int remotePort, String state, long inode) {}

  /**
   * A watched connection.
   *
   * @param idleMillis how long it had been idle when found
   * @param closedAfterMillis when it ended, counted from when it was last used; -1 if it did not
   */
  record Connection(int apiServerPort, long idleMillis, long closedAfterMillis) {}

  private final int webhookPort;
  private final Map<Integer, Long> idle;
  private final long since;

  private ApiServerConnections(int webhookPort, Map<Integer, Long> idle) {
    this.webhookPort = webhookPort;
    this.idle = idle;
    this.since = System.nanoTime();
  }

  /** The API server's connections to the webhook now, each with how long it has been idle. */
  static ApiServerConnections now(int webhookPort) throws IOException, InterruptedException {
    Set<Long> inodes = socketInodes(apiServerPid());
    Set<Integer> ports = new HashSet<>();
    for (Socket s : sockets()) {
      if (s.remotePort() == webhookPort
          && s.state().equals(ESTABLISHED)
          && inodes.contains(s.inode())) {
        ports.add(s.localPort());
      }
    }
    Map<Integer, Long> idle = new HashMap<>();
    Matcher m = SS_LINE.matcher(ss(webhookPort));
    while (m.find()) {
      int local = Integer.parseInt(m.group(1));
      if (ports.contains(local) && Integer.parseInt(m.group(2)) == webhookPort) {
        idle.put(local, Math.min(Long.parseLong(m.group(3)), Long.parseLong(m.group(4))));
      }
    }
    return new ApiServerConnections(webhookPort, idle);
  }

  Set<Integer> ports() {
    return idle.keySet();
  }

  /** Waits until every watched connection is gone, and tells when each went. */
  List<Connection> awaitClosed(Duration within) throws InterruptedException {
    List<Connection> result = new ArrayList<>();
    Set<Integer> open = new HashSet<>(idle.keySet());
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
          long after = (System.nanoTime() - since) / 1_000_000 + idle.get(port);
          result.add(new Connection(port, idle.get(port), after));
        }
      }
      Thread.sleep(250);
    }
    for (Integer port : open) {
      result.add(new Connection(port, idle.get(port), -1));
    }
    return result;
  }

  /** ss's view of the connections to the webhook's port, with their timers. */
  private static String ss(int port) throws IOException, InterruptedException {
    Process p =
        new ProcessBuilder("ss", "-tniH", "state", "established", "( dport = :" + port + " )")
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException("ss failed: " + out);
    }
    return out;
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
