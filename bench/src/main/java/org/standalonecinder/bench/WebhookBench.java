package org.standalonecinder.bench;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.net.ssl.SSLContext;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;
import org.standalonecinder.provisioner.clone.CloneResolver;
import org.standalonecinder.provisioner.clone.KubernetesClusterReader;
import org.standalonecinder.provisioner.clone.ResolverServer;
import org.standalonecinder.provisioner.controller.ClaimController;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * The webhook under wrk (one thread, 50 connections, TLS 1.3, HTTP/1.1 as kube-apiserver sends
 * reviews), pinned to one core with the load on the other, beside nginx returning a fixed body over
 * the same certificate and a minimal Vert.x server that parses the same body: reviews/s and p50/p99
 * of a PVC CREATE and a StorageClass CREATE, full handshakes/s, RSS under load and start-to-ready.
 * Both JVM servers run with the image's JVM options and a class-data-sharing archive trained first
 * (the webhook's as the image's build makes it); each figure is the median of interleaved rounds,
 * each round a fresh process. The webhook's lookups go to fabric8's mock API server in this
 * process.
 */
final class WebhookBench {

  private WebhookBench() {}

  /** One server's figures. */
  record Figures(
      String name,
      double readyMs,
      Tools.Load pvc,
      Tools.Load storageClass,
      double handshakes,
      double rssMib,
      Tools.Load cloneReview) {}

  /**
   * The options of a JVM options file: one per line, {@code #} comments and blank lines left out.
   * None when the file does not exist (the JVM's defaults).
   */
  static List<String> jvmOptions(Path file) throws IOException {
    if (file == null || !Files.isRegularFile(file)) {
      System.err.println("no JVM options file at " + file + ": the JVM's defaults");
      return List.of();
    }
    return parseJvmOptions(Files.readString(file));
  }

  static List<String> parseJvmOptions(String text) {
    return text.lines().map(String::strip).filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
  }

  /** The median of each figure over rounds (each round a fresh process). */
  static Figures median(List<Figures> rounds) {
    java.util.function.Function<java.util.function.ToDoubleFunction<Figures>, Double> m =
        f -> Stats.median(rounds.stream().map(r -> f.applyAsDouble(r)).toList());
    return new Figures(
        rounds.get(0).name(),
        m.apply(Figures::readyMs),
        medianLoad(rounds.stream().map(Figures::pvc).toList()),
        medianLoad(rounds.stream().map(Figures::storageClass).toList()),
        m.apply(Figures::handshakes),
        m.apply(Figures::rssMib),
        rounds.get(0).cloneReview() == null
            ? null
            : medianLoad(rounds.stream().map(Figures::cloneReview).toList()));
  }

  private static Tools.Load medianLoad(List<Tools.Load> loads) {
    return new Tools.Load(
        Stats.median(loads.stream().map(Tools.Load::requestsPerSecond).toList()),
        Stats.median(loads.stream().map(Tools.Load::p50Ms).toList()),
        Stats.median(loads.stream().map(Tools.Load::p99Ms).toList()),
        loads.stream().mapToLong(Tools.Load::errors).sum());
  }

  /**
   * A class-data-sharing archive of what a server loads while it starts and answers wrk's load: the
   * server runs once with {@code -XX:ArchiveClassesAtExit}, answers a few seconds of reviews and
   * stops (the baseline's; the webhook's comes from its own {@code cds-training}, see {@link
   * #archive}). Empty when the JVM made no archive.
   */
  static List<String> trainCds(String name, List<String> cmd, int port, String path, Path dir)
      throws Exception {
    return archive(
        name,
        cmd,
        dir,
        p -> {
          SSLContext tls = BenchNet.trustAll();
          ProvisionerBench.await(
              name + " ready for CDS training",
              () -> BenchNet.handshake(tls, port),
              Duration.ofSeconds(60));
          Tools.wrk("https://127.0.0.1:" + port + path, dir.resolve("pvc.json"), 4, 2, dir);
          Tools.wrk("https://127.0.0.1:" + port + path, dir.resolve("sc.json"), 4, 1, dir);
        });
  }

  /** What a training run does with its process; the process is stopped after it if it runs. */
  interface Training {
    void run(Process p) throws Exception;
  }

  /** A training command that stops by itself, successfully, as the image's build needs it to. */
  static Training toItsEnd(String name, Path dir) {
    return p -> {
      if (!p.waitFor(120, java.util.concurrent.TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new IllegalStateException(
            name + ": the training run failed; see " + dir.resolve(name + "-cds.log"));
      }
    };
  }

  /**
   * The archive {@code cmd} makes when run under {@code -XX:ArchiveClassesAtExit} while {@code
   * training} runs (as the image's build runs the webhook's {@code cds-training}). Empty when the
   * JVM made none.
   */
  static List<String> archive(String name, List<String> cmd, Path dir, Training training)
      throws Exception {
    Path archive = dir.resolve(name + ".jsa");
    List<String> dumping = new ArrayList<>(cmd);
    dumping.add(1, "-XX:ArchiveClassesAtExit=" + archive);
    Process p =
        new ProcessBuilder(dumping)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve(name + "-cds.log").toFile())
            .start();
    try {
      training.run(p);
    } finally {
      p.destroy();
      p.waitFor();
    }
    if (!Files.isRegularFile(archive)) {
      System.err.println(name + ": no CDS archive made; see " + dir.resolve(name + "-cds.log"));
      return List.of();
    }
    return List.of("-XX:SharedArchiveFile=" + archive);
  }

  /** A server under test: how to start it and where to send the reviews. */
  record Server(
      String name, List<String> cmd, int port, String path, String readyPath, Path cloneBody) {}

  /** Starts a server, waits until it answers, loads it, measures it, stops it. */
  static Figures measure(
      String name,
      List<String> cmd,
      int port,
      String path,
      String readyPath,
      Path cloneBody,
      Path dir,
      int seconds,
      int connections)
      throws Exception {
    SSLContext tls = BenchNet.trustAll();
    long t0 = System.nanoTime();
    ProcessBuilder pb =
        new ProcessBuilder(Tools.pinned(0, cmd))
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve(name + ".log").toFile());
    // As images/Dockerfile runs the JVM servers (nginx gets it too: the same C allocator).
    pb.environment().put("MALLOC_ARENA_MAX", "2");
    Process p = pb.start();
    try {
      HttpClient http = HttpClient.newBuilder().sslContext(tls).build();
      ProvisionerBench.await(
          name + " ready",
          () -> {
            if (!p.isAlive()) {
              throw new IllegalStateException(name + " exited; see " + dir.resolve(name + ".log"));
            }
            if (!BenchNet.handshake(tls, port)) {
              return false;
            }
            if (readyPath == null) {
              return true;
            }
            try {
              return http.send(
                          HttpRequest.newBuilder(
                                  URI.create("https://127.0.0.1:" + port + readyPath))
                              .timeout(Duration.ofSeconds(2))
                              .build(),
                          HttpResponse.BodyHandlers.discarding())
                      .statusCode()
                  == 200;
            } catch (IOException | InterruptedException e) {
              return false;
            }
          },
          Duration.ofSeconds(60));
      double readyMs = (System.nanoTime() - t0) / 1e6;
      String url = "https://127.0.0.1:" + port + path;
      // What the load will get: a decision, not an error page (wrk counts only non-2xx).
      String answer =
          http.send(
                  HttpRequest.newBuilder(URI.create(url))
                      .header("Content-Type", "application/json")
                      .POST(HttpRequest.BodyPublishers.ofFile(dir.resolve("pvc.json")))
                      .build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      System.err.println(name + " answers a PVC CREATE with: " + answer);
      // Warm-up: the JIT of the JVM servers, nginx's caches.
      Tools.wrk(url, dir.resolve("pvc.json"), connections, Math.max(3, seconds / 2), dir);
      Tools.Load pvc = Tools.wrk(url, dir.resolve("pvc.json"), connections, seconds, dir);
      double rss = Tools.rssMib(p.pid());
      Tools.Load sc = Tools.wrk(url, dir.resolve("sc.json"), connections, seconds, dir);
      rss = Math.max(rss, Tools.rssMib(p.pid()));
      Tools.Load clone = null;
      if (cloneBody != null) {
        // A denied clone is a 200 as well: only an admitted one measures the resolver's path.
        String said =
            http.send(
                    HttpRequest.newBuilder(URI.create(url))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofFile(cloneBody))
                        .build(),
                    HttpResponse.BodyHandlers.ofString())
                .body();
        if (!said.contains("\"allowed\":true")) {
          throw new IllegalStateException(name + " did not admit the clone review: " + said);
        }
        // After the RSS: the servers it is compared with never see this load.
        clone = Tools.wrk(url, cloneBody, connections, seconds, dir);
      }
      double hs = Tools.handshakes(port, Math.max(3, seconds / 2));
      System.err.printf(
          Locale.ROOT,
          "%s: ready %.0f ms; PVC %.0f/s p50 %.2f p99 %.2f ms (errors %d); SC %.0f/s;"
              + " %.0f handshakes/s; RSS %.0f MiB%n",
          name,
          readyMs,
          pvc.requestsPerSecond(),
          pvc.p50Ms(),
          pvc.p99Ms(),
          pvc.errors(),
          sc.requestsPerSecond(),
          hs,
          rss);
      return new Figures(name, readyMs, pvc, sc, hs, rss, clone);
    } finally {
      p.destroy();
      p.waitFor();
    }
  }

  static String nginxConf(Path dir, int port) {
    return """
        worker_processes 1;
        pid %1$s/nginx.pid;
        error_log %1$s/nginx-error.log warn;
        events { worker_connections 1024; }
        http {
          access_log off;
          client_body_temp_path %1$s/nginx-body;
          proxy_temp_path %1$s/nginx-proxy;
          fastcgi_temp_path %1$s/nginx-fastcgi;
          uwsgi_temp_path %1$s/nginx-uwsgi;
          scgi_temp_path %1$s/nginx-scgi;
          server {
            listen 127.0.0.1:%2$d ssl;
            ssl_certificate %1$s/tls/tls.crt;
            ssl_certificate_key %1$s/tls/tls.key;
            ssl_protocols TLSv1.3;
            client_body_buffer_size 64k;
            location / {
              default_type application/json;
              return 200 '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"5f0a3d1e-2b4c-4d6e-8f10-1a2b3c4d5e6f","allowed":true}}';
            }
          }
        }
        """
        .formatted(dir, port);
  }

  /** Runs the three servers one after another and adds the rows. */
  static void run(
      Table table,
      Path webhookJar,
      List<String> jvm,
      int seconds,
      int connections,
      int rounds,
      int flood,
      Path profile)
      throws Exception {
    Path dir = Files.createTempDirectory("bench-webhook");
    Path benchJar =
        Path.of(Bench.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    String java = ProcessHandle.current().info().command().orElse("java");
    Tools.run(
        List.of(
            java,
            "-jar",
            webhookJar.toString(),
            "certs",
            "generate",
            "--out",
            dir.resolve("tls").toString(),
            "--ip",
            "127.0.0.1"),
        Map.of(),
        60);
    Files.writeString(dir.resolve("pvc.json"), Reviews.pvcReview());
    Files.writeString(dir.resolve("sc.json"), Reviews.storageClassReview());
    Files.writeString(dir.resolve("clone.json"), Reviews.cloneReview());

    KubernetesMockServer api = ProvisionerBench.apiServer();
    Vertx vertx = Vertx.vertx();
    try (KubernetesClient client = api.createClient()) {
      // The claim in pvc.json names this class.
      ProvisionerBench.createClass(client);
      // The clone in clone.json: its class, and its source made and bound by the provisioner on
      // the fake Cinder the resolver asks.
      ProvisionerBench.createClass(
          client,
          ProvisionerBench.CLONES,
          ProvisionerSettings.DEFAULT_NAME,
          Map.of("smartclone", "true"));
      FakeCinderClient cinder = new FakeCinderClient();
      ClaimController provisioner =
          ProvisionerBench.controller(client, cinder, ProvisionerBench.settings("bench"), 2);
      provisioner.start();
      ProvisionerBench.await("caches synced", provisioner::synced, Duration.ofSeconds(30));
      ProvisionerBench.boundSource(client, "apps");
      provisioner.close();
      String token = "bench-" + System.nanoTime();
      Path tokenFile = Files.writeString(dir.resolve("resolver-token"), token);
      KubernetesClusterReader reader = new KubernetesClusterReader(client, "standalone-cinder");
      ResolverServer resolver =
          new ResolverServer(
              vertx,
              new CloneResolver(reader, cinder, ProvisionerSettings.DEFAULT_NAME),
              reader,
              token);
      int resolverPort = BenchNet.freePort();
      resolver.listen("127.0.0.1", resolverPort).toCompletionStage().toCompletableFuture().get();
      // The webhook finds the API server as in a Pod: an address and a token, no kubeconfig.
      // Reading a kubeconfig makes fabric8 look up every kind it knows (a kubeconfig may hold
      // extensions of any kind): some 1,000 classes and a quarter of a second at start that a Pod
      // never spends.
      List<String> apiServerAsInAPod =
          List.of(
              "-Dkubernetes.master=" + client.getMasterUrl(),
              "-Dkubernetes.auth.token=bench",
              "-Dkubernetes.auth.tryKubeConfig=false",
              "-Dkubernetes.auth.tryServiceAccount=false");
      int nginxPort = BenchNet.freePort();
      Files.writeString(dir.resolve("nginx.conf"), nginxConf(dir, nginxPort));
      List<String> nginxCmd =
          List.of(
              "nginx",
              "-c",
              dir.resolve("nginx.conf").toString(),
              "-p",
              dir.toString(),
              "-g",
              "daemon off;");
      int minimalPort = BenchNet.freePort();
      List<String> minimalCmd = new ArrayList<>(List.of(java));
      minimalCmd.addAll(jvm);
      minimalCmd.addAll(
          List.of(
              "-cp",
              benchJar.toString(),
              MinimalServer.class.getName(),
              String.valueOf(minimalPort),
              dir.resolve("tls/tls.crt").toString(),
              dir.resolve("tls/tls.key").toString()));
      int webhookPort = BenchNet.freePort();
      List<String> webhookCmd = new ArrayList<>(List.of(java));
      webhookCmd.addAll(jvm);
      webhookCmd.addAll(apiServerAsInAPod);
      webhookCmd.addAll(
          List.of(
              "-jar",
              webhookJar.toString(),
              "serve",
              "--tls-dir",
              dir.resolve("tls").toString(),
              "--listen",
              "127.0.0.1",
              "--port",
              String.valueOf(webhookPort),
              "--resolver",
              "http://127.0.0.1:" + resolverPort,
              "--resolver-token-file",
              tokenFile.toString()));
      // Both JVMs start from a class-data-sharing archive: the webhook's made as images/Dockerfile
      // makes it, the baseline's by a run under the same load.
      minimalCmd.addAll(1, trainCds("vertx-minimal", minimalCmd, minimalPort, "/", dir));
      List<String> training = new ArrayList<>(List.of(java));
      training.addAll(jvm);
      training.addAll(List.of("-jar", webhookJar.toString(), "cds-training"));
      webhookCmd.addAll(1, archive("webhook", training, dir, toItsEnd("webhook", dir)));
      if (profile != null) {
        // After the archive's training: a recording per process (the JVM names each file in
        // the folder), written when it exits.
        Files.createDirectories(profile);
        webhookCmd.add(
            1,
            "-XX:StartFlightRecording=settings=default,filename=" + profile.toAbsolutePath() + "/");
      }
      System.err.println("webhook: " + String.join(" ", webhookCmd));
      List<Server> servers =
          List.of(
              new Server("nginx", nginxCmd, nginxPort, "/", null, null),
              new Server("vertx-minimal", minimalCmd, minimalPort, "/", null, null),
              new Server(
                  "webhook",
                  webhookCmd,
                  webhookPort,
                  "/validate",
                  "/readyz",
                  dir.resolve("clone.json")));
      Map<String, List<Figures>> runs = new java.util.HashMap<>();
      for (int r = 0; r < rounds; r++) {
        // Interleaved, in a different order each round: a noisy minute hits all three alike.
        List<Server> order = new ArrayList<>(servers);
        Collections.rotate(order, r);
        for (Server s : order) {
          runs.computeIfAbsent(s.name(), k -> new ArrayList<>())
              .add(
                  measure(
                      s.name(),
                      s.cmd(),
                      s.port(),
                      s.path(),
                      s.readyPath(),
                      s.cloneBody(),
                      dir,
                      seconds,
                      connections));
        }
      }
      if (profile != null) {
        Profile.print(profile);
      }
      Figures nginx = median(runs.get("nginx"));
      Figures minimal = median(runs.get("vertx-minimal"));
      Figures webhook = median(runs.get("webhook"));
      WebhookRows.add(table, nginx, minimal, webhook, connections);
      if (flood > 0) {
        WebhookFloodBench.rows(
            table,
            WebhookFloodBench.measure(webhookCmd, webhookPort, dir, flood, 200),
            flood,
            webhook.rssMib());
      }
    } finally {
      vertx.close();
      ProvisionerBench.destroy(api);
    }
  }
}
