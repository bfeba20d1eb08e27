package org.standalonecinder.demo;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

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
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError("kubectl " + String.join(" ", args) + " did not end in 60 s");
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

  /** Runs kubectl and fails the test when it fails. */
  public Result ok(String stdin, String... args) {
    Result r = run(stdin, args);
    if (!r.ok()) {
      throw new AssertionError("kubectl " + String.join(" ", args) + " failed: " + r);
    }
    return r;
  }
}
