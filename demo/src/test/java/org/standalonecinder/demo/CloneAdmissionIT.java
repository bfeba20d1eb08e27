package org.standalonecinder.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.api.CloneToken;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfigLoader;
import org.standalonecinder.provisioner.controller.ClaimController;
import org.standalonecinder.provisioner.controller.EventRecorder;
import org.standalonecinder.provisioner.controller.RetryPolicy;
import org.standalonecinder.provisioner.mapping.VolumeMappers;
import org.standalonecinder.provisioner.provision.KubernetesSecretStore;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;
import org.standalonecinder.provisioner.provision.VolumeProvisioner;

/**
 * Clone admission end to end: the webhook ({@code serve --local}) with its resolver sidecar on the
 * real local Cinder, the provisioner, and fabric8's mock API server with an authorizer. Each review
 * goes through /mutate and then /validate on the mutated object, as the API server sends it; an
 * admitted clone is then created and provisioned as a real Cinder clone.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CloneAdmissionIT {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String OURS = ProvisionerSettings.DEFAULT_NAME;
  private static final String PROVISIONER_AGENT = "standalone-cinder-provisioner-it";

  @TempDir static Path dir;
  private static KubernetesMockServer server;
  private static KubernetesClient k;
  private static final List<String> writes = Collections.synchronizedList(new ArrayList<>());
  private static CinderClient cinder;
  private static ClaimController provisioner;
  private static VolumeProvisioner volumes;
  private static WebhookDemo webhook;
  private static KubernetesClient forProvisioner;

  /** Records every write the API server gets, for the dry-run test. */
  private static final class Recording extends Dispatcher {
    private final Dispatcher inner;

    Recording(Dispatcher inner) {
      this.inner = inner;
    }

    @Override
    public MockResponse dispatch(RecordedRequest r) {
      // The provisioner's own writes (events, annotations) are not what the dry run is about.
      if (!r.getMethod().equals("GET") && !PROVISIONER_AGENT.equals(r.getHeader("User-Agent"))) {
        writes.add(r.getMethod() + " " + r.getPath().replaceAll("\\?.*", ""));
      }
      return inner.dispatch(r);
    }
  }

  @BeforeAll
  static void start() throws Exception {
    Path env =
        Path.of(System.getProperty("cinder.local.env", "/tmp/cinder-local/cinder-local.env"));
    Map<String, String> local = LocalInstall.env(env);
    Map<String, String> os = new HashMap<>();
    os.put("OS_CINDER_ENDPOINT", local.get("CINDER_ENDPOINT"));
    os.put("OS_PROJECT_ID", local.get("CINDER_PROJECT_ID"));
    os.put("OS_USERNAME", "it");
    var cloud = CloudConfigLoader.load(null, os);
    cinder = OpenStackCinderClient.create(cloud);

    server =
        new KubernetesMockServer(
            new Context(),
            new MockWebServer(),
            new HashMap<>(),
            new Recording(
                new Authorizer(
                    new KubernetesCrudDispatcher(),
                    Map.of("apps", Set.of("alice", "bob"), "team-b", Set.of("bob")))),
            false);
    server.init();
    k = server.createClient();

    String cluster = "clone-it-" + UUID.randomUUID();
    ProvisionerSettings settings =
        new ProvisionerSettings(
            OURS,
            cluster,
            cluster,
            "iqn.2026-11.org.standalonecinder:clone-it",
            cluster,
            "127.0.0.1",
            "standalone-cinder",
            false);
    forProvisioner =
        new io.fabric8.kubernetes.client.KubernetesClientBuilder()
            .withConfig(
                new io.fabric8.kubernetes.client.ConfigBuilder(k.getConfiguration())
                    .withUserAgent(PROVISIONER_AGENT)
                    .build())
            .build();
    volumes =
        new VolumeProvisioner(
            cinder,
            new KubernetesSecretStore(forProvisioner),
            VolumeMappers.standard(),
            settings,
            Backoff.DEFAULT.withDeadline(Duration.ofSeconds(60)));
    provisioner =
        org.standalonecinder.provisioner.app.Wiring.build(
                forProvisioner,
                cinder,
                volumes,
                settings,
                new EventRecorder(forProvisioner, "standalone-cinder", "it", Clock.systemUTC()),
                new RetryPolicy(Duration.ofMillis(200), Duration.ofSeconds(2), 10),
                2,
                Duration.ofSeconds(30),
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry())
            .controller();
    provisioner.start();

    webhook = WebhookDemo.start(k.getConfiguration(), OURS, k, cinder);

    createClass("clones", Map.of("smartclone", "true", "fsType", "ext4"));
    createClass("plain", Map.of());
    createClass("zoned", Map.of("smartclone", "true", "availability", "elsewhere"));
    source("apps", "src");
    source("team-b", "shared");
    // A claim that says it is ours, bound (both ways, as the binder leaves it) to a PV that is not.
    PersistentVolumeClaim liar =
        claim("apps", "liar", "clones", Map.of("cinderVolumeId", "made-up"), "1Gi");
    liar.getSpec().setVolumeName("nfs-1");
    String liarUid = k.resource(liar).create().getMetadata().getUid();
    bound("apps", "liar", "1Gi");
    k.persistentVolumes()
        .resource(
            new PersistentVolumeBuilder()
                .withNewMetadata()
                .withName("nfs-1")
                .endMetadata()
                .withNewSpec()
                .withCapacity(Map.of("storage", new Quantity("1Gi")))
                .withAccessModes("ReadWriteOnce")
                .withNewClaimRef()
                .withNamespace("apps")
                .withName("liar")
                .withUid(liarUid)
                .endClaimRef()
                .withNewNfs()
                .withPath("/x")
                .withServer("nfs.example.com")
                .endNfs()
                .endSpec()
                .build())
        .create();
    PersistentVolumeClaim pending = claim("apps", "pending", "missing-class", Map.of(), "1Gi");
    k.resource(pending).create();
  }

  @AfterAll
  static void stop() throws Exception {
    if (webhook != null) {
      webhook.close();
    }
    if (provisioner != null) {
      provisioner.close();
    }
    // The volumes of this run, as their release would delete them (the mock has no binder).
    for (PersistentVolume pv : k.persistentVolumes().list().getItems()) {
      if (pv.getMetadata().getAnnotations() != null
          && pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID) != null) {
        volumes.delete(pv);
      }
    }
    cinder.close();
    forProvisioner.close();
    k.close();
    server.destroy();
  }

  private static void createClass(String name, Map<String, String> params) {
    k.resource(
            new StorageClassBuilder()
                .withNewMetadata()
                .withName(name)
                .endMetadata()
                .withProvisioner(OURS)
                .withParameters(params)
                .withReclaimPolicy("Delete")
                .build())
        .create();
  }

  private static PersistentVolumeClaim claim(
      String ns, String name, String className, Map<String, String> ann, String size) {
    Map<String, String> a = new HashMap<>(ann);
    a.put(ClaimAnnotations.STORAGE_PROVISIONER, OURS);
    return new PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withNamespace(ns)
        .withName(name)
        .withAnnotations(a)
        .endMetadata()
        .withNewSpec()
        .withStorageClassName(className)
        .withVolumeMode("Filesystem")
        .withAccessModes("ReadWriteOnce")
        .withNewResources()
        .addToRequests("storage", new Quantity(size))
        .endResources()
        .endSpec()
        .build();
  }

  /** A claim provisioned by our provisioner on the real Cinder, and bound. */
  private static void source(String ns, String name) {
    PersistentVolumeClaim c = k.resource(claim(ns, name, "clones", Map.of(), "1Gi")).create();
    String pv = Names.pvName(c.getMetadata().getUid());
    await("PV of " + name, () -> k.persistentVolumes().withName(pv).get() != null);
    k.persistentVolumeClaims()
        .inNamespace(ns)
        .withName(name)
        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"spec\":{\"volumeName\":\"" + pv + "\"}}");
    bound(ns, name, "1Gi");
  }

  /** What the binder leaves in a bound claim's status. */
  private static void bound(String ns, String name, String size) {
    k.persistentVolumeClaims()
        .inNamespace(ns)
        .withName(name)
        .subresource("status")
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            "{\"status\":{\"phase\":\"Bound\",\"capacity\":{\"storage\":\"" + size + "\"}}}");
  }

  private static void await(String what, BooleanSupplier c) {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!c.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("timed out waiting for " + what);
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    }
  }

  private static PersistentVolumeClaim cloneOf(
      String ns, String name, String source, String className, String size) {
    return claim(ns, name, className, Map.of(ClaimAnnotations.CLONE_REQUEST, source), size);
  }

  private static WebhookDemo.Answer admit(String user, PersistentVolumeClaim c, boolean dryRun)
      throws Exception {
    return webhook.create(user, c, dryRun);
  }

  private static void denied(WebhookDemo.Answer a, String message) {
    assertThat(a.allowed()).as(String.valueOf(a.message())).isFalse();
    assertThat(a.message()).contains(message);
  }

  static java.util.stream.Stream<org.junit.jupiter.params.provider.Arguments> denials() {
    return java.util.stream.Stream.of(
        row(
            "a source that does not exist",
            cloneOf("apps", "c1", "apps/ghost", "clones", "1Gi"),
            "source claim apps/ghost does not exist"),
        row(
            "a source not bound yet",
            cloneOf("apps", "c2", "apps/pending", "clones", "1Gi"),
            "source claim apps/pending is not Bound yet"),
        // The claim's own annotations say ours; only the resolver, looking at its PV, finds out.
        row(
            "a source whose annotations lie about its provisioner",
            cloneOf("apps", "c3", "apps/liar", "clones", "1Gi"),
            "was not provisioned by " + OURS),
        row(
            "a source larger than the clone",
            cloneOf("apps", "c4", "apps/src", "clones", "512Mi"),
            "source claim apps/src holds 1Gi, more than this claim requests (512Mi)"),
        row(
            "a source in another zone than the class asks for",
            cloneOf("apps", "c5", "apps/src", "zoned", "1Gi"),
            "source claim apps/src is in availability zone nova and StorageClass zoned asks"
                + " for elsewhere"),
        row(
            "another namespace's source, without the right to create pods there",
            cloneOf("apps", "c6", "team-b/shared", "clones", "1Gi"),
            "cloning team-b/shared into namespace apps is not allowed: you may not create pods"
                + " in team-b"),
        row(
            "a class without smartclone",
            cloneOf("apps", "c7", "apps/src", "plain", "1Gi"),
            "StorageClass plain does not allow cloning"),
        row(
            "a forged CloneOf",
            claim("apps", "c8", "clones", Map.of(ClaimAnnotations.CLONE_OF, "apps/src"), "1Gi"),
            "k8s.io/CloneOf is set by the provisioner only; remove it"));
  }

  private static org.junit.jupiter.params.provider.Arguments row(
      String name, PersistentVolumeClaim claim, String message) {
    return org.junit.jupiter.params.provider.Arguments.of(
        org.junit.jupiter.api.Named.of(name, claim), message);
  }

  @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.MethodSource("denials")
  @Order(1)
  void deniedWithItsReason(PersistentVolumeClaim claim, String message) throws Exception {
    denied(admit("alice", claim, false), message);
  }

  @Test
  @Order(2)
  void forgedAndExpiredTokensAreDeniedByTheWebhookAndRefusedByTheProvisioner() throws Exception {
    byte[] otherKey =
        "not the key of this cluster, 32b".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    Instant now = Instant.now();
    String forged =
        CloneToken.sign(
            new CloneToken.Claims(
                new ClaimRef("team-b", "shared"),
                sharedUid(),
                new ClaimRef("apps", "t1"),
                now,
                now.plusSeconds(300),
                CloneToken.Basis.REQUESTER,
                new CloneToken.Principal("bob", null, null, null)),
            CloneToken.Keys.of(otherKey, null));
    PersistentVolumeClaim withForged =
        claim(
            "apps",
            "t1",
            "clones",
            Map.of(
                ClaimAnnotations.CLONE_REQUEST,
                "team-b/shared",
                ClaimAnnotations.CLONE_TOKEN,
                forged),
            "1Gi");
    // The API server calls /validate after /mutate, which replaces a token the user brought:
    // a forged token reaches /validate only when the mutating webhook is missing.
    WebhookDemo.Answer v = webhook.validate("bob", withForged);
    assertThat(v.allowed()).isFalse();
    assertThat(v.message()).contains("was not signed by the webhook");

    byte[] key =
        Base64.getDecoder()
            .decode(
                k.secrets()
                    .inNamespace("standalone-cinder")
                    .withName(CloneToken.KEY_SECRET)
                    .get()
                    .getData()
                    .get(CloneToken.KEY_FIELD));
    Instant long_ago = now.minus(Duration.ofHours(2));
    String expired =
        CloneToken.sign(
            new CloneToken.Claims(
                new ClaimRef("team-b", "shared"),
                sharedUid(),
                new ClaimRef("apps", "t2"),
                long_ago,
                long_ago.plusSeconds(300),
                CloneToken.Basis.REQUESTER,
                new CloneToken.Principal("bob", null, null, null)),
            CloneToken.Keys.of(key, null));
    PersistentVolumeClaim withExpired =
        claim(
            "apps",
            "t2",
            "clones",
            Map.of(
                ClaimAnnotations.CLONE_REQUEST,
                "team-b/shared",
                ClaimAnnotations.CLONE_TOKEN,
                expired),
            "1Gi");
    v = webhook.validate("bob", withExpired);
    assertThat(v.message()).contains("standalone-cinder.io/clone-token expired");

    // Without the webhook at all (bypassed): the provisioner refuses, and makes no volume.
    PersistentVolumeClaim bypass = k.resource(withExpired).create();
    await("refusal", () -> events("t2").stream().anyMatch(e -> e.contains("ProvisioningFailed")));
    assertThat(events("t2")).anyMatch(e -> e.contains("standalone-cinder.io/clone-token expired"));
    assertThat(k.persistentVolumes().withName(Names.pvName(bypass.getMetadata().getUid())).get())
        .isNull();
  }

  private static String sharedUid() {
    return k.persistentVolumeClaims()
        .inNamespace("team-b")
        .withName("shared")
        .get()
        .getMetadata()
        .getUid();
  }

  @Test
  @Order(3)
  void anAdmittedCrossNamespaceCloneIsMadeWithTheWebhooksToken() throws Exception {
    WebhookDemo.Answer a =
        admit("bob", cloneOf("apps", "granted", "team-b/shared", "clones", "1Gi"), false);
    assertThat(a.allowed()).as(a.message()).isTrue();
    assertThat(a.object().at("/metadata/annotations").has(ClaimAnnotations.CLONE_TOKEN)).isTrue();
    k.resource(JSON.treeToValue(a.object(), PersistentVolumeClaim.class)).create();
    await(
        "CloneOf",
        () ->
            "team-b/shared"
                .equals(
                    k.persistentVolumeClaims()
                        .inNamespace("apps")
                        .withName("granted")
                        .get()
                        .getMetadata()
                        .getAnnotations()
                        .get(ClaimAnnotations.CLONE_OF)));
  }

  @Test
  @Order(4)
  void aDryRunReviewWritesNothingAndMakesNoVolume() throws Exception {
    int before = cinder.findVolumes(null, Map.of()).size();
    writes.clear();
    WebhookDemo.Answer a = admit("alice", cloneOf("apps", "dry", "src", "clones", "1Gi"), true);
    assertThat(a.allowed()).as(a.message()).isTrue();
    // SubjectAccessReviews are questions, stored nowhere; nothing else may be written.
    assertThat(writes)
        .allMatch(w -> w.startsWith("POST /apis/authorization.k8s.io/"), writes.toString());
    assertThat(cinder.findVolumes(null, Map.of())).hasSize(before);
  }

  @Test
  @Order(5)
  void withTheResolverDownAClonesIsDeniedWithTheReasonAndThePlainClaimsGoOn() throws Exception {
    assertThat(webhook.readiness()).isEqualTo(200);
    webhook.stopResolver();
    WebhookDemo.Answer a = admit("alice", cloneOf("apps", "down", "src", "clones", "1Gi"), false);
    denied(
        a,
        "the clone of apps/src could not be checked against Cinder: the resolver at http://127.0.0.1:");
    assertThat(a.message()).contains("cannot be reached; try again");
    // The replica stays ready: it still judges every claim that is no clone. Were it unready, a
    // provisioner that crash-loops beside it would stop every claim write of the cluster.
    // Once its probe has seen the resolver gone, not before: readiness is asked after that.
    await(
        "the webhook's probe to see the resolver down",
        () -> {
          try {
            return webhook.metrics().contains("standalone_cinder_webhook_resolver_up 0.0");
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        });
    assertThat(webhook.readiness()).isEqualTo(200);
    assertThat(
            admit("alice", claim("apps", "plain-while-down", "clones", Map.of(), "1Gi"), false)
                .allowed())
        .isTrue();
  }

  private static List<String> events(String name) {
    return k.events().v1().events().inAnyNamespace().list().getItems().stream()
        .filter(e -> e.getRegarding().getName().equals(name))
        .map(e -> e.getReason() + ": " + e.getNote())
        .toList();
  }
}
