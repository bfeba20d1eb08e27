package org.standalonecinder.demo;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The kubectl a user types, against the local API server, with what it prints. */
public final class Kubectl {

  /** What one kubectl run printed and how it ended. */
  public record Result(int exit, String out, String err) {
    public boolean ok() {
      return exit == 0;
    }

    @Override
    public String toString() {
      return "exit " + exit + "\n--- stdout\n" + out + "--- stderr\n" + err;
    }
  }

  /**
   * The {@code --timeout} forms the project's calls use: {@code 90s}, {@code 2m}, {@code 1m30s}.
   */
  private static final Pattern TIMEOUT = Pattern.compile("--timeout=(?:(\\d+)m)?(?:(\\d+)s)?");

  private final String binary;
  private final Path kubeconfig;
  private final Path work;

  public Kubectl(String binary, Path kubeconfig, Path work) {
    this.binary = binary;
    this.kubeconfig = kubeconfig;
    this.work = work;
  }

  /** Runs {@code kubectl args...} with {@code stdin} (may be null) and returns what it printed. */
  public Result run(String stdin, String... args) {
    List<String> cmd = new ArrayList<>();
    cmd.add(binary);
    cmd.addAll(List.of(args));
    try {
      Path out = Files.createTempFile(work, "kubectl", ".out");
      Path err = Files.createTempFile(work, "kubectl", ".err");
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile());
      pb.redirectError(err.toFile());
      pb.environment().put("KUBECONFIG", kubeconfig.toString());
      Process p = pb.start();
      try (var in = p.getOutputStream()) {
        if (stdin != null) {
          in.write(stdin.getBytes(StandardCharsets.UTF_8));
        }
      }
      long deadline = deadlineSeconds(args);
      if (!p.waitFor(deadline, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError(
            "kubectl " + String.join(" ", args) + " did not end in " + deadline + " s");
      }
      Result r = new Result(p.exitValue(), Files.readString(out), Files.readString(err));
      Files.delete(out);
      Files.delete(err);
      return r;
    } catch (IOException e) {
      throw new AssertionError("cannot run " + binary, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /**
   * How long a run may take: 60 s, or the command's own {@code --timeout} and half a minute more
   * when that is longer, so that kubectl's wait ends first and says what it waited for.
   */
  static long deadlineSeconds(String... args) {
    long own = 0;
    for (String arg : args) {
      Matcher m = TIMEOUT.matcher(arg);
      if (m.matches()) {
        own =
            (m.group(1) == null ? 0 : Long.parseLong(m.group(1)) * 60)
                + (m.group(2) == null ? 0 : Long.parseLong(m.group(2)));
      }
    }
    return Math.max(60, own + 30);
  }

  /** Runs kubectl and fails the test when it fails. */
  public Result ok(String stdin, String... args) {
    Result r = run(stdin, args);
    if (!r.ok()) {
      throw new AssertionError("kubectl " + String.join(" ", args) + " failed: " + r);
    }
    return r;
  }
}
