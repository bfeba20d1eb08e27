package org.standalonecinder.provisioner.clone;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.vertx.core.Vertx;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;
import org.standalonecinder.provisioner.controller.ClaimController;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.provision.Fixtures;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * The clone check the webhook asks: the token, bad requests, and each verdict with its reason,
 * against fabric8's mock API server and the fake Cinder (a real provisioner made the source).
 */
class ResolverServerTest {

  private static final String TOKEN = "a-shared-token-of-the-pod-0123456789";
  private static final ObjectMapper JSON = new ObjectMapper();

  private io.fabric8.kubernetes.client.server.mock.KubernetesMockServer server;
  private KubernetesClient client;
  private final FakeCinderClient cinder = new FakeCinderClient();
  private ClaimController controller;
  private Vertx vertx;
  private ResolverServer resolver;
  private final HttpClient http = HttpClient.newHttpClient();
  private String sourceVolume;

  @BeforeEach
  void start() throws Exception {
    server = Cluster.newApiServer();
    client = server.createClient();
    ProvisionerSettings settings = Fixtures.settings();
    controller =
        Cluster.controller(
            client,
            cinder,
            settings,
            new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
    controller.start();
    Cluster.createClass(client, "clones", Map.of("smartclone", "true"));
    Cluster.createClass(client, "plain", Map.of());
    Cluster.createClass(client, "zoned", Map.of("smartclone", "true", "availability", "elsewhere"));
    Cluster.createClass(client, "typed", Map.of("smartclone", "true", "type", "gold"));
    client
        .storage()
        .v1()
        .storageClasses()
        .resource(
            new io.fabric8.kubernetes.api.model.storage.StorageClassBuilder()
                .withNewMetadata()
                .withName("fenced")
                .endMetadata()
                .withProvisioner(ProvisionerSettings.DEFAULT_NAME)
                .withParameters(Map.of("smartclone", "true"))
                .withAllowedTopologies(
                    new io.fabric8.kubernetes.api.model.TopologySelectorTermBuilder()
                        .addNewMatchLabelExpression()
                        .withKey(
                            org.standalonecinder.provisioner.provision.Placement.DEFAULT_ZONE_LABEL)
                        .withValues("elsewhere", "far")
                        .endMatchLabelExpression()
                        .build())
                .build())
        .create();
    PersistentVolumeClaim src = Cluster.createClaim(client, "src", "clones");
    sourceVolume =
        Cluster.bind(client, src).getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    Cluster.createClaim(client, "unbound", "plain-missing");
    // The controller keeps running until the end: closing its watches now would block the mock
    // API server's event loop (fabric8's WatchEventsListener.onClosed waits for its executor on
    // it), and the resolver's lookups would time out.

    vertx = Vertx.vertx();
    KubernetesClusterReader reader = new KubernetesClusterReader(client, "standalone-cinder");
    resolver =
        new ResolverServer(
            vertx,
            new CloneResolver(reader, cinder, ProvisionerSettings.DEFAULT_NAME),
            reader,
            TOKEN);
    resolver
        .listen("127.0.0.1", 0)
        .toCompletionStage()
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS);
  }

  @AfterEach
  void stop() throws Exception {
    controller.close();
    resolver.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    vertx.close();
    client.close();
    Cluster.destroy(server);
  }

  private HttpResponse<String> post(String token, String body) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + resolver.port() + ResolverServer.PATH))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String check(String source, String className, String size, String mode) {
    PersistentVolumeClaim c = Fixtures.claimOf(null, "copy", size, mode);
    c.getSpec().setStorageClassName(className);
    return JSON.createObjectNode()
        .put("source", source)
        .set("claim", JSON.valueToTree(c))
        .toString();
  }

  static Stream<Arguments> verdicts() {
    return Stream.of(
        Arguments.of("a clonable source", check("apps/src", "clones", "1Gi", null), null),
        Arguments.of("a larger clone", check("src", "clones", "3Gi", null), null),
        Arguments.of(
            "a missing source",
            check("apps/ghost", "clones", "1Gi", null),
            "source claim apps/ghost does not exist"),
        Arguments.of(
            "an unbound source",
            check("apps/unbound", "clones", "1Gi", null),
            "source claim apps/unbound is not Bound yet (phase unknown)"),
        Arguments.of(
            "a class without smartclone",
            check("apps/src", "plain", "1Gi", null),
            "StorageClass plain does not allow cloning"),
        Arguments.of(
            "a missing class",
            check("apps/src", "nope", "1Gi", null),
            "StorageClass nope does not exist"),
        Arguments.of(
            "another zone",
            check("apps/src", "zoned", "1Gi", null),
            "source claim apps/src is in availability zone nova and StorageClass zoned asks for elsewhere"),
        Arguments.of(
            "a class whose allowed zones leave out the source's",
            check("apps/src", "fenced", "1Gi", null),
            "source claim apps/src is in zone nova, which StorageClass fenced does not allow"
                + " (topology.kubernetes.io/zone in [elsewhere, far])"),
        Arguments.of(
            "another type",
            check("apps/src", "typed", "1Gi", null),
            "source claim apps/src has volume type __DEFAULT__ and StorageClass typed asks for gold"),
        Arguments.of(
            "another volume mode",
            check("apps/src", "clones", "1Gi", "Block"),
            "has volumeMode Filesystem and this claim Block"),
        Arguments.of(
            "a claim without a size",
            check("apps/src", "clones", "0", null),
            "the claim requests 0 of storage"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("verdicts")
  void verdicts(String name, String body, String reason) throws Exception {
    HttpResponse<String> r = post(TOKEN, body);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    JsonNode a = JSON.readTree(r.body());
    if (reason == null) {
      assertThat(a.path("allowed").asBoolean()).as(r.body()).isTrue();
      assertThat(a.at("/source/volumeId").asText()).isEqualTo(sourceVolume);
      assertThat(a.at("/source/sizeGib").asInt()).isEqualTo(1);
      assertThat(a.at("/source/availabilityZone").asText()).isEqualTo("nova");
      assertThat(a.at("/source/status").asText()).isEqualTo("in-use");
    } else {
      assertThat(a.path("allowed").asBoolean()).isFalse();
      assertThat(a.path("reason").asText()).contains(reason);
    }
  }

  @Test
  void aSourceVolumeInErrorIsNoSource() throws Exception {
    cinder.setStatus(sourceVolume, "error");
    JsonNode a = JSON.readTree(post(TOKEN, check("apps/src", "clones", "1Gi", null)).body());
    assertThat(a.path("reason").asText())
        .isEqualTo(
            "the Cinder volume "
                + sourceVolume
                + " of source claim apps/src is error; Cinder clones available or in-use volumes");
  }

  @Test
  void itsHealthNeedsNoToken() throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + resolver.port() + "/healthz"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
  }

  @Test
  void noTokenNoAnswer() throws Exception {
    assertThat(post(null, check("apps/src", "clones", "1Gi", null)).statusCode()).isEqualTo(401);
    assertThat(post("wrong", check("apps/src", "clones", "1Gi", null)).statusCode()).isEqualTo(401);
  }

  @Test
  void aBodyThatIsNoCheckIs400() throws Exception {
    HttpResponse<String> r = post(TOKEN, "{\"source\":\"a/b/c\",\"claim\":{}}");
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(r.body()).contains("expected {\"source\": \"ns/name\", \"claim\": {...}}");
  }

  @Test
  void cinderDownIsNoVerdict() throws Exception {
    cinder.failNext(
        "getVolume", () -> new CinderException.Unavailable("Cinder down", 503, "req-1", null));
    HttpResponse<String> r = post(TOKEN, check("apps/src", "clones", "1Gi", null));
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.body()).contains("the clone check could not ask").contains("Cinder down");
  }

  @Test
  void itListensOnLoopbackOnly() {
    assertThatThrownBy(() -> new ResolverServer(vertx, null, null, TOKEN).listen("0.0.0.0", 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("loopback only");
  }
}
