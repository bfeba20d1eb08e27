package org.standalonecinder.provisioner.cinder.openstack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import okhttp3.mockwebserver.MockResponse;
import okhttp3.mockwebserver.RecordedRequest;
import okhttp3.mockwebserver.SocketPolicy;
import okhttp3.tls.HandshakeCertificates;
import okhttp3.tls.HeldCertificate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.provisioner.cinder.Capacity;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.ConnectionInfo;
import org.standalonecinder.provisioner.cinder.Connector;
import org.standalonecinder.provisioner.cinder.Pool;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.cinder.VolumeSpec;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig;
import org.standalonecinder.provisioner.cinder.openstack.config.ConfigKey;
import org.standalonecinder.provisioner.cinder.openstack.config.Setting;

/**
 * What a real Cinder will not do on demand: 5xx, timeouts, garbage, token expiry, odd catalogs, TLS
 * with a private CA. Normal answers are the lab's recorded ones.
 */
class OpenStackCinderClientTest {

  private static final String VOLUME = "381e4427-2dc0-440f-b118-8ece52e2932a";
  private static final Connector NODE =
      new Connector("iqn.2026-11.org.standalonecinder:node", "node-1", "10.0.0.1", false);

  private final MockCloud cloud = new MockCloud();
  private OpenStackCinderClient client;

  @AfterEach
  void tearDown() throws Exception {
    if (client != null) {
      client.close();
    }
    cloud.close();
  }

  private static CloudConfig config(Map<ConfigKey, String> values) {
    Map<ConfigKey, Setting> s = new EnumMap<>(ConfigKey.class);
    values.forEach((k, v) -> s.put(k, new Setting(v, "test")));
    return CloudConfig.from(s);
  }

  private Map<ConfigKey, String> noauth() {
    Map<ConfigKey, String> m = new EnumMap<>(ConfigKey.class);
    m.put(ConfigKey.CINDER_ENDPOINT, cloud.url("/volume/v3"));
    m.put(ConfigKey.TENANT_ID, MockCloud.PROJECT);
    m.put(ConfigKey.REQUEST_TIMEOUT, "2");
    return m;
  }

  private Map<ConfigKey, String> keystone() {
    Map<ConfigKey, String> m = new EnumMap<>(ConfigKey.class);
    m.put(ConfigKey.AUTH_URL, cloud.url("/identity/v3"));
    m.put(ConfigKey.USERNAME, "provisioner");
    m.put(ConfigKey.PASSWORD, "s3cret-password");
    m.put(ConfigKey.TENANT_NAME, "k8s");
    m.put(ConfigKey.REQUEST_TIMEOUT, "2");
    return m;
  }

  private OpenStackCinderClient client(Map<ConfigKey, String> cfg) {
    client = OpenStackCinderClient.create(config(cfg));
    return client;
  }

  private RecordedRequest lastCinder() {
    return cloud.cinderRequests.get(cloud.cinderRequests.size() - 1);
  }

  // ------------------------------------------------------------------ requests as sent

  @Test
  void createSendsTheVolumeAsCinderExpectsIt() throws Exception {
    cloud.thenCinder(MockCloud.recorded("create-volume.json"));
    Volume v =
        client(noauth())
            .createVolume(
                VolumeSpec.blank("pvc-1234", 1)
                    .withType("fast")
                    .withAvailabilityZone("nova")
                    .withMetadata(Map.of("k", "v")));
    assertThat(v.id()).isEqualTo(VOLUME);
    assertThat(v.status()).isEqualTo("creating");
    RecordedRequest r = lastCinder();
    assertThat(r.getMethod()).isEqualTo("POST");
    assertThat(r.getPath()).isEqualTo("/volume/v3/" + MockCloud.PROJECT + "/volumes");
    assertThat(r.getHeader("X-Auth-Token")).isEqualTo("standalone-cinder:" + MockCloud.PROJECT);
    assertThat(r.getHeader("OpenStack-API-Version")).isEqualTo("volume 3.70");
    assertThat(r.getHeader("Content-Type")).startsWith("application/json");
    JsonNode body = MockCloud.JSON.readTree(r.getBody().readUtf8());
    assertThat(body)
        .isEqualTo(
            MockCloud.JSON.readTree(
                "{\"volume\":{\"name\":\"pvc-1234\",\"size\":1,\"volume_type\":\"fast\","
                    + "\"availability_zone\":\"nova\",\"metadata\":{\"k\":\"v\"}}}"));
  }

  @Test
  void theLastCinderRequestIdIsInTheLogContextOfTheThread() throws Exception {
    org.slf4j.MDC.clear();
    try {
      cloud.thenCinder(MockCloud.recorded("create-volume.json"));
      client(noauth()).createVolume(VolumeSpec.blank("pvc-1234", 1));
      assertThat(org.slf4j.MDC.get(OpenStackCinderClient.MDC_REQUEST_ID))
          .isEqualTo("req-0ad8cd22-0c53-41bb-bce7-dc250edfedb0");
      cloud.thenCinder(MockCloud.status(404, "{\"itemNotFound\":{\"message\":\"gone\"}}"));
      assertThat(client.getVolume(VOLUME)).isEmpty();
      assertThat(org.slf4j.MDC.get(OpenStackCinderClient.MDC_REQUEST_ID)).isEqualTo("req-mock-404");
    } finally {
      org.slf4j.MDC.clear();
    }
  }

  /**
   * The client sends the lower of the server's newest microversion and its own cap (3.70 unless
   * configured): a server that is older or newer than the client, and a cap below both.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "server newer than the client: the client's newest, 3.80, , 3.70",
    "server older than the client: the server's newest, 3.50, , 3.50",
    "both at 3.70, 3.70, , 3.70",
    "configured cap below the server, 3.70, 3.44, 3.44",
    "configured cap above an older server, 3.50, 3.60, 3.50",
    "a server without attachments, 3.9, , 3.9"
  })
  void theMicroversionSentIsTheLowerOfServerAndCap(
      String name, String serverMax, String cap, String sent) throws Exception {
    cloud.maxVersion(serverMax);
    Map<ConfigKey, String> cfg = noauth();
    if (cap != null) {
      cfg.put(ConfigKey.MAX_MICROVERSION, cap);
    }
    OpenStackCinderClient c = client(cfg);
    assertThat(c.apiVersions().max()).hasToString(serverMax);
    assertThat(c.apiVersions().used()).hasToString(sent);
    c.getVolume(VOLUME);
    assertThat(lastCinder().getHeader("OpenStack-API-Version")).isEqualTo("volume " + sent);
  }

  /**
   * A step cut short as its replica stops (its thread interrupted) sends Cinder nothing more, not
   * even the undo's delete, which could take a volume the next leader already took over.
   */
  @Test
  void aCallFromAnInterruptedThreadIsNotSent() throws Exception {
    OpenStackCinderClient c = client(noauth());
    cloud.thenCinder(MockCloud.status(202, ""));
    Thread.currentThread().interrupt();
    try {
      assertThatThrownBy(() -> c.deleteVolume("vol-1"))
          .isInstanceOf(CinderException.Unavailable.class)
          .hasMessageContaining("interrupted, not sent");
    } finally {
      Thread.interrupted();
    }
    Thread.sleep(200);
    assertThat(cloud.cinderRequests).noneMatch(r -> "DELETE".equals(r.getMethod()));
  }

  @Test
  void theZoneOfTheSpecIsAskedFor() throws Exception {
    // ignore-volume-az is the provisioner's placement's (PlacementTest), not the adapter's.
    Map<ConfigKey, String> cfg = noauth();
    cfg.put(ConfigKey.IGNORE_VOLUME_AZ, "true");
    cloud.thenCinder(MockCloud.recorded("create-volume.json"));
    client(cfg).createVolume(VolumeSpec.blank("pvc-1", 1).withAvailabilityZone("nova"));
    assertThat(
            MockCloud.JSON
                .readTree(lastCinder().getBody().readUtf8())
                .at("/volume/availability_zone")
                .asText())
        .isEqualTo("nova");
  }

  @Test
  void initializeConnectionSendsTheConnectorAndMasksTheChapSecret() throws Exception {
    cloud.thenCinder(MockCloud.recorded("initialize-connection.json"));
    ConnectionInfo info = client(noauth()).initializeConnection(VOLUME, NODE);
    RecordedRequest r = lastCinder();
    assertThat(r.getPath()).endsWith("/volumes/" + VOLUME + "/action");
    JsonNode c = MockCloud.JSON.readTree(r.getBody().readUtf8()).path("os-initialize_connection");
    assertThat(c.path("connector").path("initiator").asText()).isEqualTo(NODE.initiator());
    assertThat(c.path("connector").path("do_local_attach").asBoolean(true)).isFalse();
    assertThat(info.driverVolumeType()).isEqualTo("iscsi");
    assertThat(info.string("target_portal")).isEqualTo("127.0.0.1:3260");
    assertThat(info.string("auth_password")).isNotBlank();
    assertThat(info.toString()).doesNotContain(info.string("auth_password")).contains("***");
  }

  @Test
  void metadataLookupSendsUrlEncodedJson() throws Exception {
    cloud.thenCinder(MockCloud.recorded("list-volumes-metadata.json"));
    client(noauth()).findVolumes("pvc-1", Map.of("a/b", "c d"));
    RecordedRequest r = lastCinder();
    assertThat(r.getRequestUrl().encodedPath()).endsWith("/volumes/detail");
    assertThat(r.getRequestUrl().queryParameter("name")).isEqualTo("pvc-1");
    assertThat(MockCloud.JSON.readTree(r.getRequestUrl().queryParameter("metadata")))
        .isEqualTo(MockCloud.JSON.readTree("{\"a/b\":\"c d\"}"));
  }

  /** A page of the recorded volume list holding volumes with these ids, linking on if asked. */
  private static MockResponse page(boolean next, String... ids) {
    ObjectNode body =
        (ObjectNode) MockCloud.load("list-volumes-metadata.json").get("body").deepCopy();
    JsonNode one = body.path("volumes").get(0);
    ArrayNode volumes = body.putArray("volumes");
    for (String id : ids) {
      volumes.add(((ObjectNode) one.deepCopy()).put("id", id));
    }
    body.remove("volumes_links");
    if (next) {
      body.putArray("volumes_links")
          .addObject()
          .put("rel", "next")
          .put("href", "http://127.0.0.1/v3/x/volumes/detail?marker=" + ids[ids.length - 1]);
    }
    return MockCloud.status(200, body.toString());
  }

  @Test
  void aLongListIsReadPageByPageWithTheSameFilter() throws Exception {
    cloud.thenCinder(page(true, "a-1", "a-2"));
    cloud.thenCinder(page(true, "b-1"));
    cloud.thenCinder(page(false, "c-1"));
    List<Volume> all = client(noauth()).findVolumes(null, Map.of("k", "v"));
    assertThat(all).extracting(Volume::id).containsExactly("a-1", "a-2", "b-1", "c-1");
    List<RecordedRequest> sent = cloud.cinderRequests.subList(0, 3);
    assertThat(sent)
        .extracting(r -> r.getRequestUrl().queryParameter("marker"))
        .containsExactly(null, "a-2", "b-1");
    assertThat(sent)
        .extracting(r -> r.getRequestUrl().queryParameter("metadata"))
        .containsOnly("{\"k\":\"v\"}");
  }

  @Test
  void metadataIsMergedWithAPost() throws Exception {
    cloud.thenCinder(MockCloud.status(200, "{\"metadata\":{\"a/b\":\"c\",\"x\":\"y\"}}"));
    client(noauth()).updateVolumeMetadata(VOLUME, Map.of("a/b", "c"));
    RecordedRequest r = lastCinder();
    assertThat(r.getMethod()).isEqualTo("POST");
    assertThat(r.getPath())
        .isEqualTo("/volume/v3/" + MockCloud.PROJECT + "/volumes/" + VOLUME + "/metadata");
    assertThat(MockCloud.JSON.readTree(r.getBody().readUtf8()))
        .isEqualTo(MockCloud.JSON.readTree("{\"metadata\":{\"a/b\":\"c\"}}"));
  }

  /**
   * The reset an admin would make of a volume Cinder left reserved: status and attach status in one
   * action; without the admin role, Cinder's policy answer as a typed error.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "allowed | 202 |",
        "policy refuses | 403 | {\"forbidden\": {\"code\": 403, \"message\": \"Policy doesn't"
            + " allow volume_extension:volume_admin_actions:reset_status to be performed.\"}}"
      })
  void aResetSetsAvailableAndDetachedInOneAction(String name, int status, String body)
      throws Exception {
    cloud.thenCinder(MockCloud.status(status, body == null ? "" : body));
    OpenStackCinderClient c = client(noauth());
    if (status == 403) {
      assertThatThrownBy(() -> c.resetToAvailable(VOLUME))
          .isInstanceOf(CinderException.Forbidden.class)
          .hasMessageContaining("reset the status of volume " + VOLUME)
          .hasMessageContaining("reset_status to be performed");
    } else {
      c.resetToAvailable(VOLUME);
    }
    RecordedRequest r = lastCinder();
    assertThat(r.getMethod()).isEqualTo("POST");
    assertThat(r.getPath()).endsWith("/volumes/" + VOLUME + "/action");
    assertThat(MockCloud.JSON.readTree(r.getBody().readUtf8()))
        .isEqualTo(
            MockCloud.JSON.readTree(
                "{\"os-reset_status\":{\"status\":\"available\",\"attach_status\":\"detached\"}}"));
  }

  static Stream<Arguments> pools() {
    return Stream.of(
        Arguments.of("file backend: numbers", "get-pools-detail.json", Capacity.Gib.class),
        Arguments.of(
            "fake backend: \"infinite\"", "get-pools-detail-fake.json", Capacity.Infinite.class));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pools")
  void poolCapacities(String name, String transcript, Class<? extends Capacity> kind) {
    cloud.thenCinder(MockCloud.recorded(transcript));
    List<Pool> pools = client(noauth()).pools();
    assertThat(pools).hasSize(1);
    assertThat(pools.get(0).total()).isInstanceOf(kind);
    assertThat(pools.get(0).free()).isInstanceOf(kind);
  }

  // ------------------------------------------------------------------ status mapping

  static Stream<Arguments> statuses() {
    return Stream.of(
        Arguments.of(
            "400 bad request",
            MockCloud.status(
                400, "{\"badRequest\":{\"code\":400,\"message\":\"Invalid volume: no\"}}"),
            CinderException.BadRequest.class,
            "Invalid volume: no"),
        Arguments.of(
            "403 policy",
            MockCloud.status(403, "{\"forbidden\":{\"message\":\"Policy doesn't allow\"}}"),
            CinderException.Forbidden.class,
            "Policy doesn't allow"),
        Arguments.of(
            "404 recorded",
            MockCloud.recorded("error-unknown-volume.json"),
            CinderException.NotFound.class,
            "could not be found"),
        Arguments.of(
            "406 recorded microversion",
            MockCloud.recorded("error-microversion.json"),
            CinderException.Unsupported.class,
            "Version 3.99 is not supported"),
        Arguments.of(
            "409 conflict",
            MockCloud.status(409, "{\"conflictingRequest\":{\"message\":\"busy\"}}"),
            CinderException.Conflict.class,
            "busy"),
        Arguments.of(
            "413 recorded quota",
            MockCloud.recorded("error-quota.json"),
            CinderException.QuotaExceeded.class,
            "exceeds allowed gigabytes quota"),
        Arguments.of(
            "500 HTML",
            MockCloud.status(500, "<html>Internal Server Error</html>"),
            CinderException.Unavailable.class,
            "HTTP 500"),
        Arguments.of(
            "503",
            MockCloud.status(503, "{\"computeFault\":{\"message\":\"down\"}}"),
            CinderException.Unavailable.class,
            "down"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("statuses")
  void statusesBecomeTypedErrorsWithTheRequestId(
      String name, MockResponse response, Class<? extends CinderException> type, String message) {
    cloud.cinderAlways(r -> response);
    assertThatThrownBy(() -> client(noauth()).reserve(VOLUME))
        .isInstanceOf(type)
        .hasMessageContaining(message)
        .hasMessageContaining("reserve volume " + VOLUME)
        .satisfies(e -> assertThat(((CinderException) e).requestId()).isPresent());
    // A POST action is never repeated: it may have been carried out.
    assertThat(cloud.cinderRequests).hasSize(1);
  }

  // ------------------------------------------------------------------ retries and timeouts

  @Test
  void aGetIsRetriedAfter5xx() {
    cloud
        .thenCinder(MockCloud.status(503, "{}"))
        .thenCinder(MockCloud.status(500, "{}"))
        .thenCinder(MockCloud.recorded("get-volume-available.json"));
    assertThat(client(noauth()).getVolume(VOLUME))
        .get()
        .extracting(Volume::status)
        .isEqualTo("available");
    assertThat(cloud.cinderRequests).hasSize(3);
  }

  @Test
  void aGetGivesUpAfterThreeAttempts() {
    cloud.cinderAlways(r -> MockCloud.status(502, "{}"));
    assertThatThrownBy(() -> client(noauth()).getVolume(VOLUME))
        .isInstanceOf(CinderException.Unavailable.class)
        .satisfies(e -> assertThat(((CinderException) e).httpStatus()).isEqualTo(502));
    assertThat(cloud.cinderRequests).hasSize(CinderHttp.IDEMPOTENT_ATTEMPTS);
  }

  @Test
  void aCreateIsNotRetriedAfter5xx() {
    cloud.cinderAlways(r -> MockCloud.status(500, "{}"));
    assertThatThrownBy(() -> client(noauth()).createVolume(VolumeSpec.blank("pvc-1", 1)))
        .isInstanceOf(CinderException.Unavailable.class);
    assertThat(cloud.cinderRequests).hasSize(1);
  }

  @Test
  void aDroppedConnectionIsUnavailable() {
    cloud.cinderAlways(
        r -> new MockResponse().setSocketPolicy(SocketPolicy.DISCONNECT_AFTER_REQUEST));
    assertThatThrownBy(() -> client(noauth()).getVolume(VOLUME))
        .isInstanceOf(CinderException.Unavailable.class)
        .hasMessageContaining("no answer from Cinder: the connection was closed");
    assertThat(cloud.cinderRequests).hasSize(CinderHttp.IDEMPOTENT_ATTEMPTS);
  }

  @Test
  void anAnswerSlowerThanTheTimeoutIsUnavailable() {
    cloud.cinderAlways(
        r -> MockCloud.recorded("get-volume-available.json").setHeadersDelay(5, TimeUnit.SECONDS));
    long t0 = System.nanoTime();
    assertThatThrownBy(() -> client(noauth()).reserve(VOLUME))
        .isInstanceOf(CinderException.Unavailable.class)
        .hasMessageContaining("no answer from Cinder: timed out");
    // request-timeout is 2 s: the call ends near it, not after the server's 5 s.
    assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofMillis(4500));
  }

  @Test
  void anAnswerThatTricklesPastTheCallTimeoutSaysItTimedOut() {
    // A byte every 500 ms never trips the 2 s read timeout; the call timeout ends it, closing the
    // socket under the read: that is a timeout, not a connection Cinder closed.
    cloud.cinderAlways(
        r ->
            MockCloud.recorded("get-volume-available.json")
                .throttleBody(1, 500, TimeUnit.MILLISECONDS));
    assertThatThrownBy(() -> client(noauth()).reserve(VOLUME))
        .isInstanceOf(CinderException.Unavailable.class)
        .hasMessageContaining("no answer from Cinder: timed out");
  }

  @Test
  void aSlowAnswerWithinTheTimeoutSucceeds() {
    cloud.thenCinder(
        MockCloud.recorded("get-volume-available.json").setBodyDelay(500, TimeUnit.MILLISECONDS));
    assertThat(client(noauth()).getVolume(VOLUME)).isPresent();
  }

  static Stream<Arguments> garbage() {
    return Stream.of(
        Arguments.of("malformed JSON", MockCloud.status(200, "{\"volume\": {\"id\": ")),
        Arguments.of("JSON without the volume", MockCloud.status(200, "{\"volumes\": []}")),
        Arguments.of("HTML", MockCloud.status(200, "<html>proxy login</html>")),
        Arguments.of("noauth's empty 204", new MockResponse().setResponseCode(204)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("garbage")
  void garbageIsUnavailableNotACrash(String name, MockResponse response) {
    cloud.cinderAlways(r -> response);
    assertThatThrownBy(() -> client(noauth()).createVolume(VolumeSpec.blank("pvc-1", 1)))
        .isInstanceOf(CinderException.Unavailable.class)
        .hasMessageContaining("create volume pvc-1");
  }

  // ------------------------------------------------------------------ keystone

  @Test
  void keystoneTokenIsReusedAndTheCatalogEndpointUsed() throws Exception {
    OpenStackCinderClient c = client(keystone());
    c.getVolume(VOLUME);
    c.getVolume(VOLUME);
    assertThat(cloud.keystoneRequests).hasSize(1);
    RecordedRequest auth = cloud.keystoneRequests.get(0);
    assertThat(auth.getPath()).isEqualTo("/identity/v3/auth/tokens");
    JsonNode body = MockCloud.JSON.readTree(auth.getBody().readUtf8()).path("auth");
    assertThat(body.at("/identity/password/user/name").asText()).isEqualTo("provisioner");
    assertThat(body.at("/identity/password/user/domain/id").asText()).isEqualTo("default");
    assertThat(body.at("/scope/project/name").asText()).isEqualTo("k8s");
    assertThat(lastCinder().getPath()).startsWith("/volume/v3/" + MockCloud.PROJECT + "/volumes/");
    assertThat(lastCinder().getHeader("X-Auth-Token")).isEqualTo("token-default");
  }

  @Test
  void a401IsAnsweredWithOneFreshToken() {
    cloud.thenKeystone(cloud.token("token-1")).thenKeystone(cloud.token("token-2"));
    cloud.cinderAlways(
        r ->
            "token-1".equals(r.getHeader("X-Auth-Token"))
                ? MockCloud.status(401, "{\"error\":{\"message\":\"expired\"}}")
                : MockCloud.recorded("get-volume-available.json"));
    assertThat(client(keystone()).getVolume(VOLUME)).isPresent();
    assertThat(cloud.keystoneRequests).hasSize(2);
  }

  @Test
  void a401AfterReauthenticationIsUnauthorized() {
    cloud.cinderAlways(r -> MockCloud.status(401, "{\"error\":{\"message\":\"no way\"}}"));
    assertThatThrownBy(() -> client(keystone()).getVolume(VOLUME))
        .isInstanceOf(CinderException.Unauthorized.class);
    assertThat(cloud.keystoneRequests).hasSize(2);
    assertThat(cloud.cinderRequests).hasSize(2);
  }

  @Test
  void aTokenNearExpiryIsRenewedBeforeUse() {
    Instant issued = Instant.parse("2026-11-22T00:00:00Z");
    MutableClock clock = new MutableClock(issued);
    cloud.expiresAt("2026-11-22T01:00:00.000000Z");
    client = OpenStackCinderClient.create(config(keystone()), clock);
    client.getVolume(VOLUME);
    clock.now = issued.plus(Duration.ofMinutes(50));
    client.getVolume(VOLUME);
    assertThat(cloud.keystoneRequests).hasSize(1);
    clock.now = issued.plus(Duration.ofMinutes(56));
    client.getVolume(VOLUME);
    assertThat(cloud.keystoneRequests).hasSize(2);
  }

  @Test
  void wrongPasswordIsUnauthorizedWithoutThePassword() {
    cloud.keystoneAlways(
        r ->
            MockCloud.status(
                401,
                "{\"error\":{\"code\":401,\"title\":\"Unauthorized\",\"message\":\"The request you"
                    + " have made requires authentication.\"}}"));
    assertThatThrownBy(() -> client(keystone()).getVolume(VOLUME))
        .isInstanceOf(CinderException.Unauthorized.class)
        .hasMessageContaining("user 'provisioner'")
        .hasMessageNotContaining("s3cret-password");
  }

  @Test
  void aCatalogWithoutVolumev3IsMisconfigured() {
    ArrayNode only = MockCloud.JSON.createArrayNode();
    for (JsonNode svc : cloud.catalog()) {
      if (svc.path("type").asText().equals("identity")) {
        only.add(svc);
      }
    }
    cloud.catalog(only);
    assertThatThrownBy(() -> client(keystone()).getVolume(VOLUME))
        .isInstanceOf(CinderException.Misconfigured.class)
        .hasMessageContaining("no volumev3 or block-storage endpoint")
        .hasMessageContaining("[identity]");
  }

  @Test
  void aCatalogWithOnlyBlockStorageIsUsed() {
    ArrayNode only = MockCloud.JSON.createArrayNode();
    for (JsonNode svc : cloud.catalog()) {
      if (!svc.path("type").asText().equals("volumev3")) {
        only.add(svc);
      }
    }
    cloud.catalog(only);
    assertThat(client(keystone()).getVolume(VOLUME)).isPresent();
  }

  @Test
  void anotherRegionIsMisconfigured() {
    Map<ConfigKey, String> cfg = keystone();
    cfg.put(ConfigKey.REGION, "RegionTwo");
    assertThatThrownBy(() -> client(cfg).getVolume(VOLUME))
        .isInstanceOf(CinderException.Misconfigured.class)
        .hasMessageContaining("in region RegionTwo");
  }

  @Test
  void theInternalInterfaceIsChosenWhenAsked() {
    for (JsonNode svc : cloud.catalog()) {
      for (JsonNode ep : svc.path("endpoints")) {
        if (ep.path("interface").asText().equals("internal")
            && !svc.path("type").asText().equals("identity")) {
          ((ObjectNode) ep).put("url", cloud.url("/volume/v3/internal-" + MockCloud.PROJECT));
        }
      }
    }
    Map<ConfigKey, String> cfg = keystone();
    cfg.put(ConfigKey.INTERFACE, "internal");
    client(cfg).getVolume(VOLUME);
    assertThat(lastCinder().getPath()).startsWith("/volume/v3/internal-");
  }

  @Test
  void aKeystoneUrlThatIsNotKeystoneIsMisconfigured() {
    cloud.keystoneAlways(r -> new MockResponse().setResponseCode(404).setBody("not here"));
    assertThatThrownBy(() -> client(keystone()).getVolume(VOLUME))
        .isInstanceOf(CinderException.Misconfigured.class)
        .hasMessageContaining("answered 404");
  }

  @Test
  void applicationCredentialsAreSentAsSuch() throws Exception {
    Map<ConfigKey, String> cfg = new EnumMap<>(ConfigKey.class);
    cfg.put(ConfigKey.AUTH_URL, cloud.url("/identity/v3"));
    cfg.put(ConfigKey.APPLICATION_CREDENTIAL_ID, "ac-123");
    cfg.put(ConfigKey.APPLICATION_CREDENTIAL_SECRET, "ac-secret");
    client(cfg).getVolume(VOLUME);
    JsonNode auth =
        MockCloud.JSON.readTree(cloud.keystoneRequests.get(0).getBody().readUtf8()).path("auth");
    assertThat(auth.at("/identity/methods/0").asText()).isEqualTo("application_credential");
    assertThat(auth.at("/identity/application_credential/id").asText()).isEqualTo("ac-123");
    assertThat(auth.at("/identity/application_credential/secret").asText()).isEqualTo("ac-secret");
    assertThat(auth.has("scope")).isFalse();
  }

  @Test
  void aTrustScopesTheToken() throws Exception {
    Map<ConfigKey, String> cfg = keystone();
    cfg.remove(ConfigKey.TENANT_NAME);
    cfg.put(ConfigKey.TRUST_ID, "trust-42");
    client(cfg).getVolume(VOLUME);
    JsonNode auth =
        MockCloud.JSON.readTree(cloud.keystoneRequests.get(0).getBody().readUtf8()).path("auth");
    assertThat(auth.at("/scope/OS-TRUST:trust/id").asText()).isEqualTo("trust-42");
  }

  @Test
  void keystoneV2PasswordForLegacyClouds() throws Exception {
    String cinderUrl = cloud.url("/volume/v3/" + MockCloud.PROJECT);
    cloud.keystoneAlways(
        r ->
            MockCloud.status(
                200,
                "{\"access\":{\"token\":{\"id\":\"v2-token\",\"expires\":"
                    + "\"2099-01-01T00:00:00Z\",\"tenant\":{\"id\":\"t1\",\"name\":\"k8s\"}},"
                    + "\"serviceCatalog\":[{\"type\":\"volumev3\",\"name\":\"cinderv3\","
                    + "\"endpoints\":[{\"region\":\"RegionOne\",\"publicURL\":\""
                    + cinderUrl
                    + "\",\"internalURL\":\""
                    + cinderUrl
                    + "\",\"adminURL\":\""
                    + cinderUrl
                    + "\"}]}],\"user\":{\"id\":\"u1\",\"name\":\"provisioner\",\"roles\":[]}}}"));
    Map<ConfigKey, String> cfg = keystone();
    cfg.put(ConfigKey.AUTH_URL, cloud.url("/identity/v2.0"));
    assertThat(client(cfg).getVolume(VOLUME)).isPresent();
    RecordedRequest auth = cloud.keystoneRequests.get(0);
    assertThat(auth.getPath()).isEqualTo("/identity/v2.0/tokens");
    JsonNode body = MockCloud.JSON.readTree(auth.getBody().readUtf8()).path("auth");
    assertThat(body.at("/passwordCredentials/username").asText()).isEqualTo("provisioner");
    assertThat(body.at("/tenantName").asText()).isEqualTo("k8s");
    assertThat(lastCinder().getHeader("X-Auth-Token")).isEqualTo("v2-token");
  }

  // ------------------------------------------------------------------ TLS

  @Test
  void tlsWithAPrivateCaFromCaFile(@TempDir Path dir) throws Exception {
    HeldCertificate ca = new HeldCertificate.Builder().certificateAuthority(0).build();
    HeldCertificate serverCert =
        new HeldCertificate.Builder()
            .addSubjectAlternativeName(cloud.server.getHostName())
            .addSubjectAlternativeName("localhost")
            .addSubjectAlternativeName("127.0.0.1")
            .signedBy(ca)
            .build();
    HandshakeCertificates serverTls =
        new HandshakeCertificates.Builder().heldCertificate(serverCert).build();
    cloud.server.useHttps(serverTls.sslSocketFactory(), false);
    Path caFile = dir.resolve("ca.pem");
    Files.writeString(caFile, ca.certificatePem());

    Map<ConfigKey, String> trusted = noauth();
    trusted.put(ConfigKey.CA_FILE, caFile.toString());
    assertThat(client(trusted).getVolume(VOLUME)).isPresent();
    client.close();

    assertThatThrownBy(() -> client(noauth()).getVolume(VOLUME))
        .isInstanceOf(CinderException.Misconfigured.class)
        .hasMessageContaining("TLS failed")
        .hasMessageContaining("ca-file");
    client.close();

    Map<ConfigKey, String> insecure = noauth();
    insecure.put(ConfigKey.TLS_INSECURE, "true");
    assertThat(client(insecure).getVolume(VOLUME)).isPresent();
  }

  @Test
  void aCaFileWithoutCertificatesIsMisconfigured(@TempDir Path dir) throws Exception {
    Path caFile = dir.resolve("ca.pem");
    Files.writeString(caFile, "not a certificate\n");
    Map<ConfigKey, String> cfg = noauth();
    cfg.put(ConfigKey.CA_FILE, caFile.toString());
    assertThatThrownBy(() -> client(cfg))
        .isInstanceOf(CinderException.Misconfigured.class)
        .hasMessageContaining("ca-file");
  }

  @Test
  void callsRunInParallelOnTheBoundedPool() throws Exception {
    OpenStackCinderClient c = client(noauth());
    c.apiVersions();
    // Each answer waits until 8 requests are at the server at once: only a client running 8
    // calls in parallel gets past it, and one running more would show a 9th.
    var inFlight = new java.util.concurrent.atomic.AtomicInteger();
    var most = new java.util.concurrent.atomic.AtomicInteger();
    var eight = new java.util.concurrent.CountDownLatch(8);
    cloud.cinderAlways(
        r -> {
          most.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
          eight.countDown();
          try {
            eight.await(5, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          inFlight.decrementAndGet();
          return MockCloud.recorded("get-volume-available.json");
        });
    var pool = java.util.concurrent.Executors.newFixedThreadPool(16);
    try {
      var futures = new java.util.ArrayList<java.util.concurrent.Future<?>>();
      for (int i = 0; i < 16; i++) {
        futures.add(pool.submit(() -> c.getVolume(VOLUME)));
      }
      for (var f : futures) {
        f.get(30, TimeUnit.SECONDS);
      }
      assertThat(most.get()).isEqualTo(CloudConfig.DEFAULT_MAX_CONCURRENT_REQUESTS);
    } finally {
      pool.shutdownNow();
    }
  }

  /** A clock the test moves. */
  static final class MutableClock extends Clock {
    volatile Instant now;

    MutableClock(Instant now) {
      this.now = now;
    }

    @Override
    public java.time.ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }
}
