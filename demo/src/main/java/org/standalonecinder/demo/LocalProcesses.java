package org.standalonecinder.demo;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The host processes of a local installation: started with a command line of their own (no cloud or
 * cluster settings from the caller's environment), each logging to {@code work/logs/<name>.log},
 * stopped, killed or started again by name.
 *
 * <p>A process that ends by itself is started again after {@link #RESTART_DELAY}, as its
 * Deployment's {@code restartPolicy: Always} would: a provisioner that lost its Lease under load
 * exits by design, and in a cluster its container comes back as a standby. One stopped or killed
 * here stays down until {@link #restart}. Each such restart is said on the console and in the
 * process' log.
 */
public final class LocalProcesses {

  /** How long an ended process stays down before it is started again. */
  static final java.time.Duration RESTART_DELAY = java.time.Duration.ofSeconds(2);

  private final Path logs;
  private final List<Process> processes = new ArrayList<>();
  private final Map<String, Process> byName = new LinkedHashMap<>();
  private final Map<String, List<String>> firstCommands = new LinkedHashMap<>();
  private final Map<String, List<String>> commands = new LinkedHashMap<>();
  private final java.util.Set<Process> downOnPurpose =
      java.util.concurrent.ConcurrentHashMap.newKeySet();
  private volatile boolean closing;

  LocalProcesses(Path logs) {
    this.logs = logs;
  }

  /** Starts {@code java args} as {@code name}; the first command of a name is kept for restarts. */
  synchronized void start(String name, List<String> args) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(ProcessHandle.current().info().command().orElse("java"));
    cmd.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.redirectOutput(ProcessBuilder.Redirect.appendTo(logs.resolve(name + ".log").toFile()));
    // Only what the command line says: no cloud or cluster settings from the test's environment.
    pb.environment().keySet().removeIf(k -> k.startsWith("OS_") || k.equals("KUBECONFIG"));
    pb.environment()
        .keySet()
        .removeAll(List.of("CLOUD_CONFIG", "CLUSTER_ID", "INITIATOR_NAME", "POD_NAMESPACE"));
    // As images/Dockerfile sets it for both containers.
    pb.environment().put("MALLOC_ARENA_MAX", "2");
    Process p = pb.start();
    processes.add(p);
    byName.put(name, p);
    firstCommands.putIfAbsent(name, args);
    commands.put(name, List.copyOf(args));
    p.onExit()
        .thenRunAsync(
            () -> ended(name, p),
            java.util.concurrent.CompletableFuture.delayedExecutor(
                RESTART_DELAY.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS));
  }

  /** Starts an ended process again, unless it was stopped on purpose or replaced meanwhile. */
  private void ended(String name, Process p) {
    try {
      synchronized (this) {
        if (closing || downOnPurpose.remove(p) || byName.get(name) != p) {
          return;
        }
        String line =
            "LocalProcesses: "
                + name
                + " (pid "
                + p.pid()
                + ") ended by itself with exit code "
                + p.exitValue()
                + "; started again, as its Deployment would";
        System.out.println(line);
        java.nio.file.Files.writeString(
            logs.resolve(name + ".log"),
            line + System.lineSeparator(),
            java.nio.file.StandardOpenOption.CREATE,
            java.nio.file.StandardOpenOption.APPEND);
        start(name, commands.get(name));
      }
    } catch (IOException e) {
      System.out.println("LocalProcesses: cannot start " + name + " again: " + e);
    }
  }

  /** The arguments {@code name} was first started with. */
  synchronized List<String> firstCommand(String name) {
    return List.copyOf(firstCommands.get(name));
  }

  /** Whether {@code name} runs. */
  synchronized boolean alive(String name) {
    Process p = byName.get(name);
    return p != null && p.isAlive();
  }

  /**
   * The operating system's id of a process this installation started (for its memory, its life).
   */
  public long pid(String name) {
    return byName.get(name).pid();
  }

  /** Kills a process at once (SIGKILL), as a crashed node would: no clean-up, no Lease release. */
  public synchronized void kill(String name) throws InterruptedException {
    Process p = byName.get(name);
    downOnPurpose.add(p);
    p.destroyForcibly().waitFor();
  }

  /** Stops a process this installation started (its log stays in {@code work/logs}). */
  public synchronized void stop(String name) throws InterruptedException {
    Process p = byName.get(name);
    downOnPurpose.add(p);
    p.destroy();
    if (!p.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor();
    }
  }

  /** Starts a stopped process again, as it was started first. */
  public void restart(String name) throws IOException {
    restart(name, List.of());
  }

  /** Starts a stopped process again with these arguments added to its first ones. */
  public void restart(String name, List<String> extra) throws IOException {
    List<String> args = new ArrayList<>(firstCommand(name));
    args.addAll(extra);
    start(name, args);
  }

  /** A port free on loopback now. */
  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  /** Stops every process, forcibly after 20 s. */
  synchronized void stopAll() {
    closing = true;
    for (Process p : processes) {
      p.destroy();
    }
    for (Process p : processes) {
      try {
        if (!p.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
          p.destroyForcibly();
        }
      } catch (InterruptedException e) {
        p.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }
}
