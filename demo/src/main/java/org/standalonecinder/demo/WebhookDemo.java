package org.standalonecinder.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.Config;
import java.io.ByteArrayInputStream;
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
import java.util.Base64;
import java.util.List;
import java.util.UUID;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.standalonecinder.webhook.cli.WebhookApp;

/**
 * The webhook's part of the demo: {@code serve --local} against the demo's API server, sent the
 * AdmissionReviews that the API server would send for what a user applies (the mock API server
 * calls no webhooks itself).
 */
final class WebhookDemo implements AutoCloseable {

  private static final ObjectMapper JSON = new ObjectMapper();

  /** What the webhook answered. */
  record Answer(boolean allowed, String message, List<String> warnings, String patch) {}

  private final WebhookApp app;
  private final HttpClient http;
  final Path caFile;

  private WebhookDemo(WebhookApp app, HttpClient http, Path caFile) {
    this.app = app;
    this.http = http;
    this.caFile = caFile;
  }

  static WebhookDemo start(Config kube, String provisionerName) throws Exception {
    Path dir = Files.createTempDirectory("standalone-cinder-demo-webhook");
    Path ca = dir.resolve("ca.crt");
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
                null,
                null,
                null));
    return new WebhookDemo(app, HttpClient.newBuilder().sslContext(trusting(ca)).build(), ca);
  }

  int port() {
    return app.port();
  }

  /** A CREATE of {@code object} by {@code user}, through /mutate then /validate (as kubectl). */
  Answer create(String user, HasMetadata object) throws Exception {
    ObjectNode o = JSON.valueToTree(object);
    Answer mutated = post("/mutate", review(user, object, o));
    if (!mutated.allowed()) {
      return mutated;
    }
    Answer validated = post("/validate", review(user, object, o));
    List<String> warnings = new ArrayList<>(mutated.warnings());
    warnings.addAll(validated.warnings());
    return new Answer(validated.allowed(), validated.message(), warnings, mutated.patch());
  }

  private static String review(String user, HasMetadata object, ObjectNode o) {
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
        res.path("allowed").asBoolean(), res.at("/status/message").asText(null), warnings, patch);
  }

  private static SSLContext trusting(Path caFile) throws Exception {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    ks.load(null, null);
    ks.setCertificateEntry(
        "ca",
        CertificateFactory.getInstance("X.509")
            .generateCertificate(new ByteArrayInputStream(Files.readAllBytes(caFile))));
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(ks);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(null, tmf.getTrustManagers(), null);
    return ctx;
  }

  @Override
  public void close() throws Exception {
    app.close();
    Files.deleteIfExists(caFile);
    Files.deleteIfExists(caFile.getParent());
  }
}
