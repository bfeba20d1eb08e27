package org.standalonecinder.demo;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The node dev/node-local starts: a real Linux kernel (user-mode Linux) with SCSI, iSCSI and RBD,
 * driven through a shared folder. A script put into {@code req/} runs in the node as root, one at a
 * time; its output and exit code come back in {@code out/}. The node reaches the host only as
 * 127.0.0.1 (tgt, Ceph, the API server), as PVs name them.
 */
public final class LocalNode {

  /** What a script did in the node. */
  public record Result(int rc, String output) {
    public boolean ok() {
      return rc == 0;
    }
  }

  private final Path share;
  private final String name;
  private final boolean kubelet;

  LocalNode(Path share, String name, boolean kubelet) {
    this.share = share;
    this.name = name;
    this.kubelet = kubelet;
  }

  /** The node's host name, which is also its Node's name when it runs a kubelet. */
  public String name() {
    return name;
  }

  /** Whether a kubelet runs in the node (started with {@code --kubelet}) and its Node was Ready. */
  public boolean runsKubelet() {
    return kubelet;
  }

  /**
   * The node of dev/node-local's env file, when one runs.
   *
   * @param envFile node-local.env
   */
  public static Optional<LocalNode> of(Path envFile) throws IOException {
    if (!Files.isRegularFile(envFile)) {
      return Optional.empty();
    }
    Map<String, String> env = LocalInstall.env(envFile);
    Path share = Path.of(env.get("NODE_LOCAL_SHARE"));
    String pid = env.get("NODE_LOCAL_PID");
    boolean alive =
        pid != null
            && ProcessHandle.of(Long.parseLong(pid)).map(ProcessHandle::isAlive).orElse(false);
    return alive && Files.exists(share.resolve("ready"))
        ? Optional.of(
            new LocalNode(
                share,
                env.getOrDefault("NODE_LOCAL_NAME", share.getParent().getFileName().toString()),
                "yes".equals(env.get("NODE_LOCAL_KUBELET"))))
        : Optional.empty();
  }

  /**
   * Runs a bash script in the node as root and waits for it.
   *
   * @throws IllegalStateException when it has not finished within {@code timeout}
   */
  public Result run(String script, Duration timeout) {
    String id = System.nanoTime() + "-" + UUID.randomUUID().toString().substring(0, 8);
    Path out = share.resolve("out").resolve(id + ".out");
    Path rc = share.resolve("out").resolve(id + ".rc");
    try {
      Path tmp = share.resolve("req").resolve(id + ".tmp");
      Files.writeString(tmp, "set -o pipefail\n" + script + "\n");
      // Renamed into place: the node never runs half a script.
      Files.move(tmp, share.resolve("req").resolve(id + ".sh"), StandardCopyOption.ATOMIC_MOVE);
      try {
        Waits.await("the node's answer to " + firstLine(script), () -> Files.exists(rc), timeout);
      } catch (IllegalStateException e) {
        throw new IllegalStateException(e.getMessage() + "; " + doing(id), e);
      }
      return new Result(Integer.parseInt(Files.readString(rc).trim()), Files.readString(out));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * A copy of a host file where the node reads it (the node sees this machine's files as the user
   * nobody does, and a build may sit where nobody cannot read).
   *
   * @return its path in the node
   */
  public String copyIn(Path file) {
    try {
      Path dir = Files.createDirectories(share.resolve("files"));
      Path tmp = dir.resolve(file.getFileName() + ".tmp");
      Files.copy(file, tmp, StandardCopyOption.REPLACE_EXISTING);
      Files.move(
          tmp, dir.resolve(file.getFileName().toString()), StandardCopyOption.REPLACE_EXISTING);
      return "/node/files/" + file.getFileName();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * What the node was doing while script {@code id} waited: ours queued or running, the script it
   * runs (its command only, and how long for: a script may hold a CHAP secret or a cephx key), how
   * many wait before ours, and the host's load.
   */
  String doing(String id) {
    StringBuilder b = new StringBuilder("node " + name + ": ");
    try (var running = Files.list(share.resolve("run"));
        var queued = Files.list(share.resolve("req"))) {
      var now = running.filter(p -> p.toString().endsWith(".sh")).findFirst();
      var waiting =
          queued
              .filter(p -> p.toString().endsWith(".sh"))
              .map(Path::getFileName)
              .map(Path::toString)
              .sorted()
              .toList();
      if (now.isEmpty()) {
        b.append("running no script");
      } else {
        Path p = now.get();
        long age = (System.currentTimeMillis() - Files.getLastModifiedTime(p).toMillis()) / 1000;
        boolean ours = p.getFileName().toString().equals(id + ".sh");
        b.append(ours ? "running ours" : "running another")
            .append(" (")
            .append(command(p))
            .append(", for ")
            .append(age)
            .append(" s)");
      }
      int ahead = (int) waiting.stream().takeWhile(n -> n.compareTo(id + ".sh") < 0).count();
      b.append(waiting.contains(id + ".sh") ? "; ours queued behind " + ahead : "")
          .append("; ")
          .append(waiting.size())
          .append(" queued");
    } catch (IOException e) {
      b.append("its folders unreadable (").append(e.getMessage()).append(")");
    }
    try {
      b.append("; host load ").append(Files.readString(Path.of("/proc/loadavg")).strip());
    } catch (IOException e) {
      // not Linux: no load to tell
    }
    return b.toString();
  }

  /** The first word of a script's first command: what it runs, nothing it is given. */
  private static String command(Path script) {
    try {
      for (String line : Files.readAllLines(script)) {
        String l = line.strip();
        if (!l.isEmpty() && !l.startsWith("#") && !l.startsWith("set ")) {
          int sp = l.indexOf(' ');
          return sp < 0 ? l : l.substring(0, sp);
        }
      }
      return "an empty script";
    } catch (IOException e) {
      return "gone";
    }
  }

  /** The text as one bash word. */
  public static String quote(String text) {
    return "'" + text.replace("'", "'\\''") + "'";
  }

  private static String firstLine(String script) {
    String s = script.strip();
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl) + " ...";
  }
}
