package org.standalonecinder.provisioner.host;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * This machine: commands run as child processes, devices read from {@code /dev}, {@code /proc} and
 * {@code /sys}.
 */
public final class LocalHost implements Host {

  /** Where each program comes from, for the message when it is missing (Debian's packages). */
  private static final Map<String, String> PACKAGES =
      Map.of("iscsiadm", "open-iscsi", "rbd", "ceph-common", "blockdev", "util-linux");

  private final Path root;
  private final Duration commandTimeout;

  /**
   * @param root where {@code proc} and {@code sys} are ({@code /}; tests lay out their own)
   * @param commandTimeout how long one command may run (an iSCSI login to a portal that does not
   *     answer takes iscsiadm's own two minutes)
   */
  public LocalHost(Path root, Duration commandTimeout) {
    this.root = root;
    this.commandTimeout = commandTimeout;
  }

  /** The real machine, commands allowed three minutes. */
  public static LocalHost machine() {
    return new LocalHost(Path.of("/"), Duration.ofMinutes(3));
  }

  @Override
  public boolean privileged() {
    try {
      // The owner of /proc/self is the process's effective uid.
      return Integer.valueOf(0).equals(Files.getAttribute(root.resolve("proc/self"), "unix:uid"));
    } catch (IOException | UnsupportedOperationException e) {
      return false;
    }
  }

  @Override
  public Result run(Command command) {
    Path output;
    try {
      output = Files.createTempFile("standalone-cinder-", ".out");
    } catch (IOException e) {
      throw new HostException("cannot make a file for the output of " + command.shown(), e);
    }
    // The output goes to a file, not a pipe: a command that hangs with its output open would
    // block a reader of a pipe past any timeout.
    ProcessBuilder pb =
        new ProcessBuilder(command.argv())
            .redirectErrorStream(true)
            .redirectOutput(output.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    // iscsiadm's and rbd's messages are read by people, who search for them in English.
    pb.environment().put("LC_ALL", "C");
    try {
      Process p;
      try {
        p = pb.start();
      } catch (IOException e) {
        String program = command.argv().get(0);
        String pkg = PACKAGES.get(Path.of(program).getFileName().toString());
        throw new HostException(
            program
                + " cannot be run ("
                + e.getMessage()
                + ")"
                + (pkg == null ? "" : ": install " + pkg));
      }
      try {
        if (!p.waitFor(commandTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
          p.destroyForcibly();
          throw new HostException(
              "'" + command.shown() + "' did not end within " + commandTimeout.toMillis() + " ms");
        }
      } catch (InterruptedException e) {
        p.destroyForcibly();
        Thread.currentThread().interrupt();
        throw new HostException("interrupted while '" + command.shown() + "' ran", e);
      }
      return new Result(p.exitValue(), Files.readString(output).strip());
    } catch (IOException e) {
      throw new HostException("'" + command.shown() + "': " + e.getMessage(), e);
    } finally {
      try {
        Files.deleteIfExists(output);
      } catch (IOException e) {
        // a temporary file left behind; nothing secret is in it (secrets go in as arguments)
      }
    }
  }

  @Override
  public boolean exists(String device) {
    return Files.exists(Path.of(device));
  }

  @Override
  public java.util.List<String> list(String folder) {
    // Under the test's root like proc and sys; "/" on a real host.
    Path dir = root.resolve(folder.startsWith("/") ? folder.substring(1) : folder);
    try (var names = Files.list(dir)) {
      return names.map(p -> p.getFileName().toString()).sorted().toList();
    } catch (IOException e) {
      return java.util.List.of();
    }
  }

  @Override
  public Optional<String> usedBy(String device) {
    Path real;
    try {
      real = Path.of(device).toRealPath();
    } catch (IOException e) {
      return Optional.empty();
    }
    String name = real.getFileName().toString();
    Path sysBlock = root.resolve("sys/class/block").resolve(name);
    Optional<String> holder = holders(sysBlock);
    if (holder.isPresent()) {
      return holder;
    }
    try {
      for (String line : Files.readAllLines(root.resolve("proc/self/mounts"))) {
        String[] f = line.split(" ");
        if (f.length > 1 && isDeviceOrPartition(f[0], real)) {
          return Optional.of("mounted at " + f[1].replace("\\040", " "));
        }
      }
    } catch (IOException e) {
      // no mount table to read: nothing known to be mounted
    }
    return Optional.empty();
  }

  /** Holders of the device or of one of its partitions ({@code /sys/class/block/sdb/sdb1}). */
  private static Optional<String> holders(Path sysBlock) {
    try (Stream<Path> entries = Files.list(sysBlock)) {
      for (Path dir :
          Stream.concat(Stream.of(sysBlock), entries.filter(Files::isDirectory)).toList()) {
        Path holders = dir.resolve("holders");
        if (!Files.isDirectory(holders)) {
          continue;
        }
        try (Stream<Path> h = Files.list(holders)) {
          List<String> names = h.map(x -> x.getFileName().toString()).sorted().toList();
          if (!names.isEmpty()) {
            return Optional.of("held by " + String.join(", ", names));
          }
        }
      }
    } catch (NoSuchFileException e) {
      return Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    }
    return Optional.empty();
  }

  private static boolean isDeviceOrPartition(String source, Path real) {
    if (!source.startsWith("/")) {
      return false;
    }
    Path src;
    try {
      src = Path.of(source).toRealPath();
    } catch (IOException e) {
      return false;
    }
    String r = real.toString();
    String s = src.toString();
    // sdb1 of sdb; nvme0n1p1 and rbd0p1 of nvme0n1 and rbd0
    return s.equals(r) || (s.startsWith(r) && s.substring(r.length()).matches("p?[0-9]+"));
  }
}
