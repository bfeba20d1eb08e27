package org.standalonecinder.webhook.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfigurationBuilder;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfigurationBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.certs.CaBundle;
import org.standalonecinder.webhook.cli.WebhookApp.Certificates;
import org.standalonecinder.webhook.http.WebhookServer;

/**
 * The whole chain as the API server meets it: the local command's server over TLS, the policy file,
 * the rules, and lookups and SubjectAccessReviews against a mock API server. Each row is one
 * AdmissionReview and the exact answer.
 */
class WebhookAppTest {

  private KubernetesMockServer server;
  private KubernetesClient client;

  /** Who may create pods where: the authorizer behind the mock's SubjectAccessReviews. */
  private static final Map<String, String> POD_CREATORS = Map.of("team-b", "bob");

  /**
   * The CRUD mock API server, plus an authorizer: the CRUD mock would store a SubjectAccessReview
   * and answer it without a status (a "no" that cannot turn into a "yes").
   */
  private static final class Authorizer extends Dispatcher {
    private final Dispatcher crud;

    Authorizer(Dispatcher crud) {
      this.crud = crud;
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
      if (!("POST".equals(request.getMethod()) && request.getPath().startsWith(SAR))) {
        return crud.dispatch(request);
      }
      try {
        JsonNode spec = JSON.readTree(request.getUtf8Body()).path("spec");
        String ns = spec.at("/resourceAttributes/namespace").asText();
        boolean allowed =
            "create".equals(spec.at("/resourceAttributes/verb").asText())
                && "pods".equals(spec.at("/resourceAttributes/resource").asText())
                && spec.path("user").asText().equals(POD_CREATORS.get(ns));
        ObjectNode answer = JSON.createObjectNode();
        answer.put("apiVersion", "authorization.k8s.io/v1");
        answer.put("kind", "SubjectAccessReview");
        answer.set("spec", spec);
        answer.putObject("status").put("allowed", allowed);
        return new MockResponse().setResponseCode(201).setBody(answer.toString());
      } catch (Exception e) {
        return new MockResponse().setResponseCode(400).setBody(e.toString());
      }
    }
  }

  private static final String OURS = "openstack.org/standalone-cinder";
  private static final String SAR = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  private WebhookApp app;
  private HttpClient http;

  @BeforeEach
  void start() throws Exception {
    Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
    server =
        new KubernetesMockServer(
            new Context(),
            new MockWebServer(),
            responses,
            new Authorizer(new KubernetesMixedDispatcher(responses)),
            false);
    server.init();
    client = server.createClient();
    client
        .resource(
            new NamespaceBuilder()
                .withNewMetadata()
                .withName("sandbox")
                .addToLabels("exempt", "true")
                .endMetadata()
                .build())
        .create();
    client
        .resource(
            new StorageClassBuilder()
                .withNewMetadata()
                .withName("clone")
                .endMetadata()
                .withProvisioner(OURS)
                .addToParameters("smartclone", "true")
                .build())
        .create();
    create(source("apps", "src", "2Gi"));
    create(source("team-b", "shared", "1Gi"));
    Files.writeString(
        dir.resolve("policy.yaml"), "exemptNamespaces: {matchLabels: {exempt: \"true\"}}\n");
    app = start(Certificates.LOCAL, dir.resolve("policy.yaml"));
    // As the API server of a cluster set up as docs/install.md advises: it authenticates to the
    // webhook with a client certificate (--client-ca, --client-name).
    http = asTheApiServer(dir.resolve("ca.crt"));
  }

  /**
   * A client as the API server of a cluster set up as docs/install.md advises: it trusts the
   * webhook's CA and authenticates with the client certificate the webhook takes reviews from.
   */
  static HttpClient asTheApiServer(Path caFile) throws Exception {
    return HttpClient.newBuilder()
        .sslContext(
            CaBundle.fromPem(Files.readString(caFile))
                .clientContext(
                    API_SERVER_CA.issueClient(
                        "kube-apiserver", Duration.ofHours(1), java.time.Clock.systemUTC())))
        .build();
  }

  /** The CA of the API server's client certificate for webhooks. */
  private static final org.standalonecinder.certs.CertificateAuthority API_SERVER_CA =
      org.standalonecinder.certs.CertificateAuthority.generate(
          "api-server-client-ca", Duration.ofDays(1), java.time.Clock.systemUTC());

  private WebhookApp start(Certificates certs, Path policy) throws Exception {
    return start(client.getConfiguration(), dir, certs, policy);
  }

  /**
   * The webhook as the tests run it: on loopback, writing its CA to {@code dir/ca.crt}, taking
   * reviews only from {@link #asTheApiServer}'s certificate.
   */
  static WebhookApp start(
      io.fabric8.kubernetes.client.Config kube, Path dir, Certificates certs, Path policy)
      throws Exception {
    return WebhookApp.start(
        kube,
        new WebhookApp.Options(
            "127.0.0.1",
            0,
            certs,
            dir.resolve("ca.crt"),
            null,
            "standalone-cinder",
            "standalone-cinder-webhook",
            "standalone-cinder",
            "standalone-cinder-webhook-ca",
            policy,
            OURS,
            "system:serviceaccount:standalone-cinder:standalone-cinder-provisioner",
            Duration.ofMillis(200),
            null,
            null,
            null,
            null,
            null,
            null,
            new WebhookServer.Callers(
                List.of(API_SERVER_CA.certificate()), java.util.Set.of("kube-apiserver")),
            null,
            null));
  }

  @AfterEach
  void stop() {
    if (app != null) {
      app.close();
    }
    client.close();
    server.destroy();
  }

  private void create(HasMetadata o) {
    client.resource(o).create();
  }

  static PersistentVolumeClaim source(String ns, String name, String size) {
    return new PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withNamespace(ns)
        .withName(name)
        .addToAnnotations("volume.kubernetes.io/storage-provisioner", OURS)
        .addToAnnotations("cinderVolumeId", "vol-" + name)
        .endMetadata()
        .withNewSpec()
        .withStorageClassName("clone")
        .withVolumeMode("Filesystem")
        .withNewResources()
        .addToRequests("storage", new Quantity(size))
        .endResources()
        .endSpec()
        .withNewStatus()
        .withPhase("Bound")
        .addToCapacity("storage", new Quantity(size))
        .endStatus()
        .build();
  }

  static SSLContext trusting(Path caFile) throws Exception {
    return CaBundle.fromPem(Files.readString(caFile)).clientContext();
  }

  /** A PVC CREATE review as the API server sends it (already defaulted). */
  static String claimReview(
      String uid, String ns, String user, Map<String, String> annotations, String size, boolean dry)
      throws Exception {
    ObjectNode claim =
        JSON.valueToTree(
            new PersistentVolumeClaimBuilder()
                .withNewMetadata()
                .withNamespace(ns)
                .withName("copy")
                .withAnnotations(annotations)
                .addToFinalizers("kubernetes.io/pvc-protection")
                .endMetadata()
                .withNewSpec()
                .withStorageClassName("clone")
                .withVolumeMode("Filesystem")
                .withAccessModes("ReadWriteOnce")
                .withNewResources()
                .addToRequests("storage", new Quantity(size))
                .endResources()
                .endSpec()
                .build());
    return review(uid, "PersistentVolumeClaim", "persistentvolumeclaims", ns, user, claim, dry);
  }

  static String classReview(String uid, Map<String, String> params) {
    ObjectNode sc =
        JSON.valueToTree(
            new StorageClassBuilder()
                .withNewMetadata()
                .withName("fast")
                .endMetadata()
                .withProvisioner(OURS)
                .withParameters(params)
                .build());
    return review(uid, "StorageClass", "storageclasses", null, "admin", sc, false);
  }

  static String review(
      String uid,
      String kind,
      String resource,
      String ns,
      String user,
      ObjectNode object,
      boolean dry) {
    ObjectNode root = JSON.createObjectNode();
    root.put("apiVersion", "admission.k8s.io/v1");
    root.put("kind", "AdmissionReview");
    ObjectNode req = root.putObject("request");
    req.put("uid", uid);
    req.putObject("kind")
        .put("group", kind.equals("StorageClass") ? "storage.k8s.io" : "")
        .put("version", "v1")
        .put("kind", kind);
    req.putObject("resource")
        .put("group", kind.equals("StorageClass") ? "storage.k8s.io" : "")
        .put("version", "v1")
        .put("resource", resource);
    if (ns != null) {
      req.put("namespace", ns);
    }
    req.put("operation", "CREATE");
    req.putObject("userInfo").put("username", user).putArray("groups").add("system:authenticated");
    req.set("object", object);
    req.put("dryRun", dry);
    return root.toString();
  }

  private JsonNode post(String path, String body) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + app.port() + path))
                .version(HttpClient.Version.HTTP_1_1)
                .header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return JSON.readTree(r.body()).path("response");
  }

  private String get(String path) throws Exception {
    return http.send(
            HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + app.port() + path)).build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  /** One review through the chain and its exact answer. */
  record Row(
      String name,
      String path,
      String body,
      boolean allowed,
      String patch,
      String message,
      List<String> warnings) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Arguments> reviews() throws Exception {
    String defaulted =
        "[{\"op\":\"replace\",\"path\":\"/metadata/annotations/k8s.io~1CloneRequest\",\"value\":\"apps/src\"}]";
    return Stream.of(
            new Row(
                "a same-namespace clone is defaulted",
                "/mutate",
                claimReview(
                    "u1", "apps", "alice", Map.of("k8s.io/CloneRequest", "src"), "2Gi", false),
                true,
                defaulted,
                null,
                List.of()),
            new Row(
                "the validating endpoint allows it without a patch",
                "/validate",
                claimReview(
                    "u2", "apps", "alice", Map.of("k8s.io/CloneRequest", "apps/src"), "2Gi", false),
                true,
                null,
                null,
                List.of()),
            new Row(
                "a source looked up in the API server that is missing",
                "/validate",
                claimReview(
                    "u3",
                    "apps",
                    "alice",
                    Map.of("k8s.io/CloneRequest", "apps/ghost"),
                    "2Gi",
                    false),
                false,
                null,
                "source claim apps/ghost does not exist",
                List.of()),
            new Row(
                "cross-namespace: the SubjectAccessReview says no",
                "/validate",
                claimReview(
                    "u4",
                    "apps",
                    "alice",
                    Map.of("k8s.io/CloneRequest", "team-b/shared"),
                    "1Gi",
                    false),
                false,
                null,
                "cloning team-b/shared into namespace apps is not allowed: you may not create pods in team-b and the source grants no clone to apps (annotation standalone-cinder.io/clone-grant, or a ReferenceGrant in team-b)",
                List.of()),
            new Row(
                "cross-namespace: the SubjectAccessReview says yes",
                "/mutate",
                claimReview(
                    "u5",
                    "apps",
                    "bob",
                    Map.of("k8s.io/CloneRequest", "team-b/shared"),
                    "1Gi",
                    false),
                true,
                "~\\[\\{\"op\":\"add\",\"path\":\"/metadata/annotations/standalone-cinder.io~1clone-token\",\"value\":\"[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\"\\}\\]",
                null,
                List.of()),
            new Row(
                "a larger clone is allowed with a warning",
                "/validate",
                claimReview(
                    "u6", "apps", "alice", Map.of("k8s.io/CloneRequest", "apps/src"), "5Gi", false),
                true,
                null,
                null,
                List.of(
                    "this claim (5Gi) is larger than its source claim apps/src (2Gi): the cloned"
                        + " filesystem keeps the source's size until it is grown")),
            new Row(
                "a forged CloneOf is denied",
                "/validate",
                claimReview(
                    "u7", "apps", "alice", Map.of("k8s.io/CloneOf", "apps/src"), "1Gi", false),
                false,
                null,
                "k8s.io/CloneOf is set by the provisioner only; remove it",
                List.of()),
            new Row(
                "the exempt namespace (by its labels) is left alone",
                "/validate",
                claimReview("u8", "sandbox", "alice", Map.of("k8s.io/CloneOf", "x"), "1Gi", false),
                true,
                null,
                null,
                List.of()),
            new Row(
                "a misspelt StorageClass parameter is denied with a suggestion",
                "/validate",
                classReview("u9", Map.of("smartClne", "true")),
                false,
                null,
                "did you mean 'smartclone'",
                List.of()),
            new Row(
                "a StorageClass's smartclone is normalised",
                "/mutate",
                classReview("u10", Map.of("smartclone", "TRUE")),
                true,
                "[{\"op\":\"replace\",\"path\":\"/parameters/smartclone\",\"value\":\"true\"}]",
                null,
                List.of("parameter smartclone: \"TRUE\" is stored as smartclone: \"true\"")))
        .map(Arguments::of);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("reviews")
  void review(Row row) throws Exception {
    JsonNode r = post(row.path(), row.body());
    assertThat(r.path("uid").asText())
        .isEqualTo(JSON.readTree(row.body()).at("/request/uid").asText());
    assertThat(r.path("allowed").asBoolean()).as(r.toString()).isEqualTo(row.allowed());
    if (row.allowed()) {
      if (row.patch() == null) {
        assertThat(r.has("patch")).as(r.toString()).isFalse();
      } else {
        assertThat(r.path("patchType").asText()).isEqualTo("JSONPatch");
        byte[] patch = Base64.getDecoder().decode(r.path("patch").asText());
        if (row.patch().startsWith("~")) {
          // A patch with a signed, time-dependent value: its shape.
          assertThat(new String(patch, java.nio.charset.StandardCharsets.UTF_8))
              .matches(row.patch().substring(1));
        } else {
          assertThat(JSON.readTree(patch)).isEqualTo(JSON.readTree(row.patch()));
        }
      }
    } else {
      assertThat(r.at("/status/code").asInt()).isIn(400, 403);
      assertThat(r.at("/status/message").asText()).contains(row.message());
    }
    List<String> warnings = new ArrayList<>();
    r.path("warnings").forEach(w -> warnings.add(w.asText()));
    assertThat(warnings).isEqualTo(row.warnings());
  }

  @Test
  void aDryRunReviewOnlyReads() throws Exception {
    drainRecordedRequests();
    JsonNode r =
        post(
            "/mutate",
            claimReview(
                "d1", "apps", "bob", Map.of("k8s.io/CloneRequest", "team-b/shared"), "1Gi", true));
    assertThat(r.path("allowed").asBoolean()).isTrue();
    List<String> calls = drainRecordedRequests();
    assertThat(calls).isNotEmpty();
    // SubjectAccessReviews are questions: the API server stores nothing for them.
    assertThat(calls)
        .allMatch(c -> c.startsWith("GET ") || c.equals("POST " + SAR), "only reads: " + calls);
  }

  private List<String> drainRecordedRequests() throws InterruptedException {
    List<String> calls = new ArrayList<>();
    RecordedRequest r;
    while ((r = server.takeRequest(100, TimeUnit.MILLISECONDS)) != null) {
      calls.add(r.getMethod() + " " + r.getPath().replaceAll("\\?.*", ""));
    }
    return calls;
  }

  @Test
  void metricsCountDecisionsByRuleAndResult() throws Exception {
    post(
        "/validate",
        claimReview(
            "m1", "apps", "alice", Map.of("k8s.io/CloneRequest", "apps/ghost"), "2Gi", false));
    post(
        "/mutate",
        claimReview("m2", "apps", "alice", Map.of("k8s.io/CloneRequest", "src"), "2Gi", false));
    String text = get("/metrics");
    assertThat(text)
        .contains(
            "standalone_cinder_webhook_decisions_total{endpoint=\"validate\",kind=\"PersistentVolumeClaim\",mode=\"enforce\",result=\"denied\",rule=\"clone-source-missing\"} 1.0")
        .contains(
            "standalone_cinder_webhook_decisions_total{endpoint=\"mutate\",kind=\"PersistentVolumeClaim\",mode=\"enforce\",result=\"patched\",rule=\"clone-request-namespace\"} 1.0")
        .contains(
            "standalone_cinder_webhook_review_seconds_count{endpoint=\"validate\",kind=\"PersistentVolumeClaim\"} 1")
        .contains("standalone_cinder_webhook_policy_valid 1.0")
        // The serving certificate of the test's CA lives for days, not seconds.
        .containsPattern("standalone_cinder_webhook_certificate_expiry_seconds [1-9][0-9]{4,}");
    // Every webhook metric the chart's dashboard and alerts ask for is one this registry serves.
    assertThat(served(text)).containsAll(chartAsksFor("standalone_cinder_webhook_"));
  }

  /** The metric names of a Prometheus text page's samples. */
  static java.util.Set<String> served(String page) {
    return java.util.regex.Pattern.compile("(?m)^(standalone_cinder_[a-z0-9_]+)[{ ]")
        .matcher(page)
        .results()
        .map(m -> m.group(1))
        .collect(java.util.stream.Collectors.toSet());
  }

  /** The metric names with {@code prefix} that the chart's dashboard and alert rules query. */
  static java.util.Set<String> chartAsksFor(String prefix) throws java.io.IOException {
    java.util.Set<String> out = new java.util.TreeSet<>();
    for (String f :
        List.of(
            "../charts/standalone-cinder/files/dashboard.json",
            "../charts/standalone-cinder/templates/monitoring.yaml")) {
      java.util.regex.Pattern.compile("standalone_cinder_[a-z0-9_]+")
          .matcher(Files.readString(Path.of(f)))
          .results()
          .map(m -> m.group())
          .filter(n -> n.startsWith(prefix))
          .forEach(out::add);
    }
    assertThat(out).as("the chart queries metrics named %s*", prefix).isNotEmpty();
    return out;
  }

  @Test
  void aChangedPolicyFileTakesEffectAndABadOneKeepsThePolicyInForce() throws Exception {
    String forged =
        claimReview("p1", "apps", "alice", Map.of("k8s.io/CloneOf", "apps/src"), "1Gi", false);
    assertThat(post("/validate", forged).path("allowed").asBoolean()).isFalse();

    Files.writeString(dir.resolve("policy.yaml"), "mode: audit\n");
    JsonNode audited = awaitAnswer(forged, r -> r.path("allowed").asBoolean());
    assertThat(audited.path("warnings").get(0).asText())
        .isEqualTo(
            "standalone-cinder policy (audit mode) would deny this: k8s.io/CloneOf is set by the"
                + " provisioner only; remove it");

    Files.writeString(dir.resolve("policy.yaml"), "mode: strict\n");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (app.policy().valid() && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertThat(app.policy().valid()).isFalse();
    assertThat(post("/validate", forged).path("allowed").asBoolean())
        .as("the audit policy stays in force")
        .isTrue();
    assertThat(get("/metrics"))
        .contains("standalone_cinder_webhook_policy_valid 0.0")
        .contains("standalone_cinder_webhook_policy_reload_failures_total 1.0");

    Files.delete(dir.resolve("policy.yaml"));
    awaitAnswer(forged, r -> !r.path("allowed").asBoolean());
    assertThat(app.policy().valid()).as("no file: the safe defaults").isTrue();
  }

  @Test
  void inAClusterTheCaLivesInASecretAndOnlyOurEntriesGetItsBundle() throws Exception {
    client
        .resource(
            new MutatingWebhookConfigurationBuilder()
                .withNewMetadata()
                .withName("standalone-cinder")
                .endMetadata()
                .addNewWebhook()
                .withName("claims" + WebhookApp.ENTRY_SUFFIX)
                .withNewClientConfig()
                .withNewService("standalone-cinder-webhook", "standalone-cinder", "/mutate", 443)
                .endClientConfig()
                .endWebhook()
                .addNewWebhook()
                .withName("someone.else.example.com")
                .withNewClientConfig()
                .withCaBundle("c29tZW9uZSBlbHNl")
                .withUrl("https://example.com/x")
                .endClientConfig()
                .endWebhook()
                .build())
        .create();
    client
        .resource(
            new ValidatingWebhookConfigurationBuilder()
                .withNewMetadata()
                .withName("standalone-cinder")
                .endMetadata()
                .addNewWebhook()
                .withName("claims" + WebhookApp.ENTRY_SUFFIX)
                .withNewClientConfig()
                .withNewService("standalone-cinder-webhook", "standalone-cinder", "/validate", 443)
                .endClientConfig()
                .endWebhook()
                .build())
        .create();

    try (WebhookApp replica = start(Certificates.SECRET, null)) {
      var mutating =
          client
              .admissionRegistration()
              .v1()
              .mutatingWebhookConfigurations()
              .withName("standalone-cinder")
              .get();
      String bundle = mutating.getWebhooks().get(0).getClientConfig().getCaBundle();
      assertThat(bundle).isNotNull();
      assertThat(mutating.getWebhooks().get(1).getClientConfig().getCaBundle())
          .as("another webhook's entry")
          .isEqualTo("c29tZW9uZSBlbHNl");
      assertThat(
              client
                  .admissionRegistration()
                  .v1()
                  .validatingWebhookConfigurations()
                  .withName("standalone-cinder")
                  .get()
                  .getWebhooks()
                  .get(0)
                  .getClientConfig()
                  .getCaBundle())
          .isEqualTo(bundle);
      var secret =
          client
              .secrets()
              .inNamespace("standalone-cinder")
              .withName("standalone-cinder-webhook-ca")
              .get();
      assertThat(secret.getType()).isEqualTo("kubernetes.io/tls");

      // What the API server does: trust the injected bundle, check the Service's name.
      Path ca = dir.resolve("bundle.pem");
      Files.write(ca, Base64.getDecoder().decode(bundle));
      SSLContext ctx = trusting(ca);
      try (SSLSocket socket =
          (SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", replica.port())) {
        SSLParameters params = socket.getSSLParameters();
        params.setServerNames(
            List.of(new SNIHostName("standalone-cinder-webhook.standalone-cinder.svc")));
        socket.setSSLParameters(params);
        socket.startHandshake();
        X509Certificate served = (X509Certificate) socket.getSession().getPeerCertificates()[0];
        assertThat(served.getSubjectAlternativeNames())
            .extracting(l -> (Object) l.get(1))
            .contains(
                "standalone-cinder-webhook",
                "standalone-cinder-webhook.standalone-cinder",
                "standalone-cinder-webhook.standalone-cinder.svc",
                "standalone-cinder-webhook.standalone-cinder.svc.cluster.local");
      }

      // A second replica serves a certificate of the same CA and writes nothing.
      drainRecordedRequests();
      try (WebhookApp second = start(Certificates.SECRET, null)) {
        assertThat(drainRecordedRequests()).allMatch(c -> c.startsWith("GET "));
        try (SSLSocket socket =
            (SSLSocket) ctx.getSocketFactory().createSocket("127.0.0.1", second.port())) {
          socket.startHandshake();
        }
      }
    }
  }

  @Test
  void withoutTheApiServerCloneRequestsAreDeniedWithTheReasonAndPlainClaimsPass() throws Exception {
    app.close();
    app =
        WebhookApp.start(
            new io.fabric8.kubernetes.client.ConfigBuilder()
                .withMasterUrl("https://127.0.0.1:1")
                .withTrustCerts(true)
                .build(),
            new WebhookApp.Options(
                "127.0.0.1",
                0,
                Certificates.LOCAL,
                dir.resolve("ca.crt"),
                null,
                "standalone-cinder",
                "standalone-cinder-webhook",
                "standalone-cinder",
                "standalone-cinder-webhook-ca",
                null,
                OURS,
                "system:serviceaccount:standalone-cinder:standalone-cinder-provisioner",
                Duration.ofSeconds(30),
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                null,
                null));
    http = HttpClient.newBuilder().sslContext(trusting(dir.resolve("ca.crt"))).build();
    JsonNode clone =
        post(
            "/validate",
            claimReview(
                "x1", "apps", "alice", Map.of("k8s.io/CloneRequest", "apps/src"), "2Gi", false));
    assertThat(clone.path("allowed").asBoolean()).isFalse();
    assertThat(clone.at("/status/message").asText())
        .startsWith(
            "the webhook could not check this request, try again: cannot look up StorageClass"
                + " clone: ");
    assertThat(
            post("/validate", claimReview("x2", "apps", "alice", Map.of(), "2Gi", false))
                .path("allowed")
                .asBoolean())
        .isTrue();
    // What needs no lookup is reported whatever the lookups do: the user fixes the syntax first.
    JsonNode malformed =
        post(
            "/mutate",
            claimReview(
                "x3",
                "apps",
                "alice",
                Map.of("k8s.io/CloneRequest", "a/src/x", "k8s.io/CloneOf", "apps/src"),
                "2Gi",
                false));
    assertThat(malformed.path("allowed").asBoolean()).isFalse();
    assertThat(malformed.at("/status/code").asInt()).isEqualTo(403);
    assertThat(malformed.at("/status/message").asText())
        .startsWith(
            "k8s.io/CloneOf is set by the provisioner only; remove it; k8s.io/CloneRequest"
                + " 'a/src/x' must be <claim> or <namespace>/<claim>, each a valid Kubernetes"
                + " name; the webhook could not check the rest of this request: cannot look up"
                + " StorageClass clone: ");
  }

  @Test
  void aCrossNamespaceCloneIsStampedAndItsStampPassesValidation() throws Exception {
    String body =
        claimReview(
            "t1", "apps", "bob", Map.of("k8s.io/CloneRequest", "team-b/shared"), "1Gi", false);
    JsonNode mutated = post("/mutate", body);
    JsonNode review = JSON.readTree(body);
    JsonNode patched =
        com.flipkart.zjsonpatch.JsonPatch.apply(
            JSON.readTree(Base64.getDecoder().decode(mutated.path("patch").asText())),
            review.at("/request/object"));
    ((ObjectNode) review.path("request")).set("object", patched);
    JsonNode validated = post("/validate", review.toString());
    assertThat(validated.path("allowed").asBoolean()).as(validated.toString()).isTrue();
    // The key is the cluster's: the provisioner verifies with the same one.
    assertThat(
            client
                .secrets()
                .inNamespace("standalone-cinder")
                .withName(org.standalonecinder.api.CloneToken.KEY_SECRET)
                .get())
        .isNotNull();
  }

  private JsonNode awaitAnswer(String body, java.util.function.Predicate<JsonNode> done)
      throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    JsonNode r;
    do {
      r = post("/validate", body);
      if (done.test(r)) {
        return r;
      }
      Thread.sleep(50);
    } while (System.nanoTime() < deadline);
    throw new AssertionError("the policy change did not take effect: " + r);
  }
}
