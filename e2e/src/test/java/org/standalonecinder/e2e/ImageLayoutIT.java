package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.Waits;

/**
 * images/Dockerfile without a container runtime (none runs here): the file is read as a builder
 * would, the layout of each final stage is made from this build's jars exactly as its COPY lines
 * say, and each stage's ENTRYPOINT is started from that layout with the stage's environment, on
 * this machine's Java 17 standing in for the base image's. The webhook serves TLS from it; the
 * provisioner's {@code cinder check} reaches the real local Cinder from it.
 */
@Order(-3)
class ImageLayoutIT {

  private static final Path ROOT = Path.of(System.getProperty("project.root", "..")).normalize();
  private static final Path DOCKERFILE = ROOT.resolve("images/Dockerfile");
  private static Map<String, Stage> stages;

  @TempDir static Path layouts;

  /**
   * One stage of the Dockerfile, as far as this test needs it. A stage built {@code FROM} another
   * starts with what that one set, as a builder's does.
   */
  static final class Stage {
    final String name;
    final String from;
    String workdir = "/";
    final List<String[]> copies = new ArrayList<>();
    final Map<String, String> env = new LinkedHashMap<>();
    List<String> entrypoint;
    List<String> cmd;
    String user;
    final List<String> labels = new ArrayList<>();
    final List<String> runs = new ArrayList<>();

    Stage(String name, String from, Stage parent) {
      this.name = name;
      this.from = parent == null ? from : parent.from;
      if (parent != null) {
        workdir = parent.workdir;
        copies.addAll(parent.copies);
        env.putAll(parent.env);
        entrypoint = parent.entrypoint;
        cmd = parent.cmd;
        user = parent.user;
        labels.addAll(parent.labels);
      }
    }
  }

  @BeforeAll
  static void parse() throws IOException {
    stages = parse(Files.readString(DOCKERFILE));
  }

  /** The stages of a Dockerfile: continuation lines joined, comments dropped. */
  static Map<String, Stage> parse(String text) throws IOException {
    ObjectMapper json = new ObjectMapper();
    Map<String, Stage> out = new LinkedHashMap<>();
    String joined = text.replaceAll("(?m)^\\s*#.*\\n", "").replaceAll("\\\\\\n\\s*", " ");
    Stage s = null;
    for (String raw : joined.split("\n")) {
      String line = raw.strip();
      if (line.isEmpty()) {
        continue;
      }
      String[] w = line.split("\\s+", 2);
      String arg = w.length > 1 ? w[1] : "";
      switch (w[0]) {
        case "FROM" -> {
          String[] f = arg.split("\\s+");
          assertThat(f).as("every stage is named: " + line).hasSize(3);
          s = new Stage(f[2], f[0], out.get(f[0]));
          out.put(f[2], s);
        }
        case "WORKDIR" -> s.workdir = arg;
        case "COPY" -> s.copies.add(arg.split("\\s+"));
        case "ENV" -> {
          int eq = arg.indexOf('=');
          s.env.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        case "ENTRYPOINT" -> s.entrypoint = List.of(json.readValue(arg, String[].class));
        case "CMD" -> s.cmd = List.of(json.readValue(arg, String[].class));
        case "USER" -> s.user = arg;
        case "LABEL" -> s.labels.add(arg);
        case "RUN" -> s.runs.add(arg);
        case "ARG", "EXPOSE" -> {}
        default -> throw new AssertionError("an instruction this test does not know: " + line);
      }
    }
    return out;
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"webhook", "provisioner"})
  void eachImageRunsAsNonRootWithNoShellAndIsLabelled(String name) throws IOException {
    Stage s = stages.get(name);
    assertThat(s).as("a stage named " + name).isNotNull();
    assertThat(s.user).isEqualTo("65532:65532");
    // JSON (exec) form: the entry point and what runs at build time need no shell; the base has
    // none.
    assertThat(s.entrypoint).first().isEqualTo("java");
    assertThat(s.entrypoint).contains("-jar");
    for (List<String> run : runs(s)) {
      assertThat(run).as("a build step runs java, in exec form").first().isEqualTo("java");
    }
    assertThat(s.from).isEqualTo("${RUN_IMAGE}");
    assertThat(String.join(" ", s.labels))
        .contains(
            "org.opencontainers.image.title=",
            "org.opencontainers.image.version=",
            "org.opencontainers.image.revision=",
            "org.opencontainers.image.source=");
    assertThat(s.env)
        .containsEntry("JDK_JAVA_OPTIONS", "@/app/jvm.options")
        .containsEntry("MALLOC_ARENA_MAX", "2");
  }

  /** The stage's RUN lines, each in exec form (a JSON array: no shell). */
  private static List<List<String>> runs(Stage s) throws IOException {
    ObjectMapper json = new ObjectMapper();
    List<List<String>> out = new ArrayList<>();
    for (String run : s.runs) {
      assertThat(run).as("exec form").startsWith("[");
      out.add(List.of(json.readValue(run, String[].class)));
    }
    return out;
  }

  /**
   * Lays a stage out under a folder as its COPY lines say: {@code --from=build} takes the build
   * stage's path (its WORKDIR is this checkout), the others the build context (this checkout).
   */
  private static Path layout(Stage s) throws IOException {
    Stage build = stages.get("build");
    Path root = layouts.resolve(s.name);
    for (String[] c : s.copies) {
      Path src;
      String dst;
      if (c[0].startsWith("--from=")) {
        assertThat(c[0]).isEqualTo("--from=build");
        String from = c[1];
        assertThat(from).startsWith(build.workdir + "/");
        src = ROOT.resolve(from.substring(build.workdir.length() + 1));
        dst = c[2];
      } else {
        src = ROOT.resolve(c[0]);
        dst = c[1];
      }
      assertThat(src).as("built by this run: " + String.join(" ", c)).isRegularFile();
      Path target = root.resolve(dst.substring(1));
      Files.createDirectories(target.getParent());
      Files.copy(src, target);
    }
    return root;
  }

  /** The stage's entry point and these arguments, with its paths under the layout. */
  private static ProcessBuilder command(Stage s, Path root, List<String> args) {
    ProcessBuilder pb = inLayout(s, root, s.entrypoint);
    pb.command().addAll(args);
    return pb;
  }

  /**
   * A command as the image has it, run in the stage's container (its environment, its paths under
   * the layout), this machine's Java standing in for the image's {@code java}.
   */
  private static ProcessBuilder inLayout(Stage s, Path root, List<String> argv) {
    List<String> cmd = new ArrayList<>();
    for (String a : argv) {
      // A path, or an option's value that is one (-XX:SharedArchiveFile=/app/...).
      cmd.add(a.startsWith("/") ? root + a : a.replaceFirst("^(-[^=/]+=)/", "$1" + root + "/"));
    }
    assertThat(java.nio.file.Path.of(cmd.get(0)).getFileName()).hasToString("java");
    cmd.set(0, ProcessHandle.current().info().command().orElseThrow());
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(root.toFile());
    pb.environment().clear();
    s.env.forEach((k, v) -> pb.environment().put(k, v.replace("@/", "@" + root + "/")));
    return pb;
  }

  @Test
  void theWebhookServesTlsFromTheImagesLayout() throws Exception {
    Stage s = stages.get("webhook");
    Path root = layout(s);
    assertThat(s.cmd).containsExactly("serve");
    // The build's steps, as a builder runs them: the class-data-sharing archive's training (the
    // webhook answers its own reviews) and the check that the archive maps.
    List<List<String>> runs = runs(s);
    assertThat(runs).as("the archive is made, then checked").hasSize(2);
    for (List<String> run : runs) {
      Process step = inLayout(s, root, run).redirectErrorStream(true).start();
      String out;
      try (InputStream in = step.getInputStream()) {
        out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
      assertThat(step.waitFor(120, TimeUnit.SECONDS)).as(out).isTrue();
      assertThat(step.exitValue()).as(String.join(" ", run) + ":\n" + out).isZero();
      if (run.contains("cds-training")) {
        assertThat(out).containsPattern("cds-training: [1-9][0-9]* reviews answered");
      }
    }
    assertThat(root.resolve("app/webhook.jsa")).isRegularFile();
    Path ca = root.resolve("ca.crt");
    int port;
    try (var socket = new java.net.ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    Path log = root.resolve("webhook.log");
    ProcessBuilder serve =
        command(
                s,
                root,
                List.of(
                    "serve", "--local", "--port", String.valueOf(port), "--ca-out", ca.toString()))
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    // Sharing on: a JVM that cannot map the archive the image made stops instead of starting
    // without it.
    serve.environment().merge("JDK_JAVA_OPTIONS", " -Xshare:on", String::concat);
    long started = System.nanoTime();
    Process p = serve.start();
    try {
      try {
        Waits.await(
            "the webhook from the layout",
            () -> {
              if (!p.isAlive()) {
                throw new IllegalStateException("the webhook from the layout exited");
              }
              return readyz(ca, port);
            },
            Duration.ofSeconds(60));
      } catch (IllegalStateException e) {
        throw new AssertionError(e.getMessage() + "; its output:\n" + Files.readString(log), e);
      }
      long readyMs = (System.nanoTime() - started) / 1_000_000;
      String out = Files.readString(log);
      assertThat(out)
          .as("the JVM options file was read")
          .contains("Picked up JDK_JAVA_OPTIONS: @" + root + "/app/jvm.options")
          .contains("TLS by OPENSSL");
      long rssKib = rssKib(p.pid());
      System.out.printf(
          "image layout: webhook ready in %d ms from its archive, RSS %d MiB%n",
          readyMs, rssKib / 1024);
    } finally {
      p.destroy();
      p.waitFor(20, TimeUnit.SECONDS);
    }
  }

  @Test
  void theProvisionerChecksTheRealCinderFromTheImagesLayout() throws Exception {
    Stage s = stages.get("provisioner");
    Path root = layout(s);
    assertThat(s.cmd).containsExactly("run");
    Map<String, String> cinder =
        LocalInstall.env(
            Path.of(System.getProperty("cinder.local.env", "/tmp/cinder-local/cinder-local.env")));
    // Where the Deployment mounts the cloud.conf Secret and points CLOUD_CONFIG.
    Path conf = root.resolve("etc/standalone-cinder/cloud.conf");
    Files.createDirectories(conf.getParent());
    Files.writeString(
        conf,
        "[Global]\ncinder-endpoint = "
            + cinder.get("CINDER_ENDPOINT")
            + "\ntenant-id = "
            + cinder.get("CINDER_PROJECT_ID")
            + "\nusername = standalone-cinder\n");
    // As install.md, operations.md and the chart's NOTES.txt have an admin run it in the Pod
    // (kubectl exec ... --): no flag, the file from CLOUD_CONFIG as the Deployment sets it.
    ProcessBuilder check = inLayout(s, root, inPodCheck());
    check.environment().put("CLOUD_CONFIG", root + DEPLOYMENT_CLOUD_CONFIG);
    Process p = check.redirectErrorStream(true).start();
    String out;
    try (InputStream in = p.getInputStream()) {
      out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    assertThat(out).contains("Picked up JDK_JAVA_OPTIONS: @" + root + "/app/jvm.options");
  }

  /** CLOUD_CONFIG as manifests/base's Deployment (and the chart's) sets it. */
  private static final String DEPLOYMENT_CLOUD_CONFIG = "/etc/standalone-cinder/cloud.conf";

  /**
   * The command an admin runs in the provisioner's container, as install.md, operations.md and the
   * chart's NOTES.txt print it after {@code kubectl exec ... --}: one form in all three.
   */
  static List<String> inPodCheck() throws IOException {
    java.util.regex.Pattern exec =
        java.util.regex.Pattern.compile(
            "exec deployment/standalone-cinder -c provisioner -- \\\\\n\\s*(.+)");
    java.util.Set<String> forms = new java.util.TreeSet<>();
    for (String f :
        List.of(
            "docs/install.md",
            "docs/operations.md",
            "charts/standalone-cinder/templates/NOTES.txt")) {
      java.util.regex.Matcher m = exec.matcher(Files.readString(ROOT.resolve(f)));
      assertThat(m.find()).as(f + " shows the in-Pod check").isTrue();
      forms.add(m.group(1).trim());
    }
    assertThat(forms).as("one form everywhere").hasSize(1);
    assertThat(Files.readString(ROOT.resolve("manifests/base/deployment.yaml")))
        .contains("- name: CLOUD_CONFIG\n              value: " + DEPLOYMENT_CLOUD_CONFIG);
    return List.of(forms.iterator().next().split(" +"));
  }

  private static boolean readyz(Path ca, int port) {
    try {
      KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
      trust.load(null, null);
      try (InputStream in = Files.newInputStream(ca)) {
        trust.setCertificateEntry(
            "ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
      }
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(trust);
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(null, tmf.getTrustManagers(), null);
      return HttpClient.newBuilder()
              .sslContext(ctx)
              .build()
              .send(
                  HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + "/readyz"))
                      .timeout(Duration.ofSeconds(2))
                      .build(),
                  HttpResponse.BodyHandlers.discarding())
              .statusCode()
          == 200;
    } catch (Exception e) {
      return false;
    }
  }

  private static long rssKib(long pid) throws IOException {
    for (String l : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (l.startsWith("VmRSS:")) {
        return Long.parseLong(l.replaceAll("[^0-9]", ""));
      }
    }
    return -1;
  }
}
