package org.standalonecinder.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The load tools the webhook rows use (wrk, openssl s_time), and what they print, parsed. */
final class Tools {

  private Tools() {}

  /** What wrk measured: requests per second and latency percentiles in milliseconds. */
  record Load(double requestsPerSecond, double p50Ms, double p99Ms, long errors) {}

  private static final Pattern RPS = Pattern.compile("Requests/sec:\\s+([0-9.]+)");
  private static final Pattern PCT = Pattern.compile("^\\s*(50|99)%\\s+([0-9.]+)(us|ms|s)\\s*$");
  private static final Pattern ERRORS =
      Pattern.compile("Non-2xx or 3xx responses:\\s+(\\d+)|Socket errors:.*?timeout (\\d+)");
  private static final Pattern S_TIME =
      Pattern.compile("(\\d+) connections in ([0-9.]+) real seconds");

  /** Parses {@code wrk --latency} output. */
  static Load parseWrk(String out) {
    Matcher m = RPS.matcher(out);
    if (!m.find()) {
      throw new IllegalStateException("wrk printed no rate:\n" + out);
    }
    double rps = Double.parseDouble(m.group(1));
    double p50 = Double.NaN;
    double p99 = Double.NaN;
    for (String line : out.split("\n")) {
      Matcher p = PCT.matcher(line);
      if (p.matches()) {
        double v = Double.parseDouble(p.group(2));
        double ms =
            switch (p.group(3)) {
              case "us" -> v / 1000;
              case "s" -> v * 1000;
              default -> v;
            };
        if (p.group(1).equals("50")) {
          p50 = ms;
        } else {
          p99 = ms;
        }
      }
    }
    long errors = 0;
    Matcher e = ERRORS.matcher(out);
    while (e.find()) {
      errors += Long.parseLong(e.group(1) != null ? e.group(1) : e.group(2));
    }
    return new Load(rps, p50, p99, errors);
  }

  /** Parses {@code openssl s_time -new}: full handshakes (connections) per real second. */
  static double parseSTime(String out) {
    Matcher m = S_TIME.matcher(out);
    if (!m.find()) {
      throw new IllegalStateException("openssl s_time printed no count:\n" + out);
    }
    return Long.parseLong(m.group(1)) / Double.parseDouble(m.group(2));
  }

  /** Runs a command to its end and returns what it printed (stdout and stderr). */
  static String run(List<String> cmd, Map<String, String> env, int timeoutSeconds)
      throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().putAll(env);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException(cmd.get(0) + " did not finish in " + timeoutSeconds + " s");
    }
    return out;
  }

  /** The command, pinned to one core when taskset exists (servers on 0, load on 1). */
  static List<String> pinned(int core, List<String> cmd) {
    List<String> out = new ArrayList<>();
    if (Files.isExecutable(Path.of("/usr/bin/taskset"))) {
      out.addAll(List.of("taskset", "-c", String.valueOf(core)));
    }
    out.addAll(cmd);
    return out;
  }

  /** wrk with one thread and {@code connections} connections, POSTing {@code body}. */
  static Load wrk(String url, Path body, int connections, int seconds, Path dir)
      throws IOException, InterruptedException {
    Path script = dir.resolve("post.lua");
    Files.writeString(
        script,
        "wrk.method = \"POST\"\nwrk.headers[\"Content-Type\"] = \"application/json\"\n"
            + "local f = io.open(os.getenv(\"BODY\"), \"r\")\nwrk.body = f:read(\"*a\")\nf:close()\n");
    String out =
        run(
            pinned(
                1,
                List.of(
                    "wrk",
                    "-t1",
                    "-c" + connections,
                    "-d" + seconds + "s",
                    "--latency",
                    "-s",
                    script.toString(),
                    url)),
            Map.of("BODY", body.toString()),
            seconds + 30);
    return parseWrk(out);
  }

  /** Full TLS handshakes per second for {@code seconds}, one client (openssl s_time -new). */
  static double handshakes(int port, int seconds) throws IOException, InterruptedException {
    return parseSTime(
        run(
            pinned(
                1,
                List.of(
                    "openssl",
                    "s_time",
                    "-connect",
                    "127.0.0.1:" + port,
                    "-new",
                    "-time",
                    String.valueOf(seconds))),
            Map.of(),
            seconds + 30));
  }

  /** The resident set of a process in MiB, from /proc. */
  static double rssMib(long pid) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
      }
    }
    return Double.NaN;
  }
}
