package org.standalonecinder.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.flipkart.zjsonpatch.JsonPatch;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.vertx.core.Vertx;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import org.standalonecinder.certs.CaBundle;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.clone.CloneResolver;
import org.standalonecinder.provisioner.clone.KubernetesClusterReader;
import org.standalonecinder.provisioner.clone.ResolverServer;
import org.standalonecinder.webhook.cli.WebhookApp;

/**
 * The webhook's part of the demo: {@code serve --local} against the demo's API server, sent the
 * AdmissionReviews that the API server would send for what a user applies (the mock API server
 * calls no webhooks itself).
 */
final class WebhookDemo implements AutoCloseable {

  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * What the webhook answered.
   *
   * @param object the object as the API server would store it (the mutating patch applied)
   */
  record Answer(
      boolean allowed, String message, List<String> warnings, String patch, JsonNode object) {}

  private final WebhookApp app;
  private final Vertx vertx;
  private final ResolverServer resolver;
  private final HttpClient http;
  final Path caFile;
  private final Path dir;

  private WebhookDemo(
      WebhookApp app, Vertx vertx, ResolverServer resolver, HttpClient http, Path dir) {
    this.app = app;
    this.vertx = vertx;
    this.resolver = resolver;
    this.http = http;
    this.dir = dir;
    this.caFile = dir.resolve("ca.crt");
  }

  /** Starts the provisioner's resolver (as the sidecar would run) and the webhook that asks it. */
  static WebhookDemo start(
      Config kube, String provisionerName, KubernetesClient k, CinderClient cinder)
      throws Exception {
    Path dir = Files.createTempDirectory("standalone-cinder-demo-webhook");
    Path ca = dir.resolve("ca.crt");
    Vertx vertx = Vertx.vertx();
    KubernetesClusterReader reader = new KubernetesClusterReader(k, "standalone-cinder");
    Path tokenFile = dir.resolve("resolver-token");
    Files.writeString(tokenFile, UUID.randomUUID() + "-" + UUID.randomUUID());
    ResolverServer resolver =
        new ResolverServer(
            vertx,
            new CloneResolver(reader, cinder, provisionerName),
            reader,
            Files.readString(tokenFile));
    resolver.listen("127.0.0.1", 0).toCompletionStage().toCompletableFuture().get();
    // This class plays the API server, authenticated as docs/install.md advises (--client-ca,
    // --client-name): the requester's rights count only for reviews from a known sender.
    org.standalonecinder.certs.CertificateAuthority apiServerCa =
        org.standalonecinder.certs.CertificateAuthority.generate(
            "api-server-client-ca", Duration.ofDays(1), java.time.Clock.systemUTC());
    WebhookApp app =
        WebhookApp.start(
            kube,
            new WebhookApp.Options(
                "127.0.0.1",
                0,
                WebhookApp.Certificates.LOCAL,
                ca,
                null,
                "standalone-cinder",
                "standalone-cinder-webhook",
                "standalone-cinder",
                "standalone-cinder-webhook-ca",
                null,
                provisionerName,
                "system:serviceaccount:standalone-cinder:standalone-cinder-provisioner",
                Duration.ofSeconds(30),
                URI.create("http://127.0.0.1:" + resolver.port()),
                tokenFile,
                Duration.ofSeconds(3),
                null,
                null,
                null,
                new org.standalonecinder.webhook.http.WebhookServer.Callers(
                    List.of(apiServerCa.certificate()), java.util.Set.of("kube-apiserver")),
                null,
                null));
    return new WebhookDemo(
        app,
        vertx,
        resolver,
        HttpClient.newBuilder()
            .sslContext(
                CaBundle.fromPem(Files.readString(ca))
                    .clientContext(
                        apiServerCa.issueClient(
                            "kube-apiserver", Duration.ofHours(1), java.time.Clock.systemUTC())))
            .build(),
        dir);
  }

  int resolverPort() {
    return resolver.port();
  }

  int port() {
    return app.port();
  }

  /** A CREATE of {@code object} by {@code user}, through /mutate then /validate (as kubectl). */
  Answer create(String user, HasMetadata object) throws Exception {
    return create(user, object, false);
  }

  /**
   * As {@link #create(String, HasMetadata)}, as a dry run ({@code kubectl apply --dry-run=server})
   * when asked.
   */
  Answer create(String user, HasMetadata object, boolean dryRun) throws Exception {
    ObjectNode o = JSON.valueToTree(object);
    Answer mutated = post("/mutate", review(user, object, o, dryRun));
    if (!mutated.allowed()) {
      return mutated;
    }
    JsonNode patched =
        mutated.patch() == null ? o : JsonPatch.apply(JSON.readTree(mutated.patch()), o);
    Answer validated = post("/validate", review(user, object, (ObjectNode) patched, dryRun));
    List<String> warnings = new ArrayList<>(mutated.warnings());
    warnings.addAll(validated.warnings());
    return new Answer(validated.allowed(), validated.message(), warnings, mutated.patch(), patched);
  }

  /** The validating endpoint alone: what it says when the mutating webhook did not run. */
  Answer validate(String user, HasMetadata object) throws Exception {
    return post("/validate", review(user, object, JSON.valueToTree(object), false));
  }

  /** The status of {@code GET /readyz}. */
  int readiness() throws Exception {
    return http.send(
            HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + app.port() + "/readyz"))
                .timeout(Duration.ofSeconds(5))
                .build(),
            HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  /** The body of {@code GET /metrics}. */
  String metrics() throws Exception {
    return http.send(
            HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + app.port() + "/metrics"))
                .timeout(Duration.ofSeconds(5))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  /** Stops the resolver, as when its container is down. */
  void stopResolver() throws Exception {
    resolver.close().toCompletionStage().toCompletableFuture().get();
  }

  private static String review(String user, HasMetadata object, ObjectNode o, boolean dryRun) {
    ObjectNode root = JSON.createObjectNode();
    root.put("apiVersion", "admission.k8s.io/v1");
    root.put("kind", "AdmissionReview");
    ObjectNode req = root.putObject("request");
    req.put("uid", UUID.randomUUID().toString());
    String group = object.getApiVersion().contains("/") ? object.getApiVersion().split("/")[0] : "";
    req.putObject("kind").put("group", group).put("version", "v1").put("kind", object.getKind());
    if (object.getMetadata().getNamespace() != null) {
      req.put("namespace", object.getMetadata().getNamespace());
    }
    req.put("name", object.getMetadata().getName());
    req.put("operation", "CREATE");
    req.put("dryRun", dryRun);
    req.putObject("userInfo").put("username", user);
    req.set("object", o);
    return root.toString();
  }

  private Answer post(String path, String body) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + app.port() + path))
                .header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    JsonNode res = JSON.readTree(r.body()).path("response");
    List<String> warnings = new ArrayList<>();
    res.path("warnings").forEach(w -> warnings.add(w.asText()));
    String patch =
        res.has("patch")
            ? new String(
                Base64.getDecoder().decode(res.path("patch").asText()), StandardCharsets.UTF_8)
            : null;
    return new Answer(
        res.path("allowed").asBoolean(),
        res.at("/status/message").asText(null),
        warnings,
        patch,
        null);
  }

  @Override
  public void close() throws Exception {
    app.close();
    resolver.close().toCompletionStage().toCompletableFuture().get();
    vertx.close();
    try (var files = Files.list(dir)) {
      for (Path f : files.toList()) {
        Files.delete(f);
      }
    }
    Files.delete(dir);
  }
}
