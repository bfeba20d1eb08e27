package org.standalonecinder.provisioner.plugin;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeStatusBuilder;
import io.fabric8.kubernetes.api.model.events.v1.Event;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;
import org.standalonecinder.provisioner.controller.ClaimController;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.controller.Processed;
import org.standalonecinder.provisioner.controller.ProvisionRequest;
import org.standalonecinder.provisioner.controller.ProvisionResult;
import org.standalonecinder.provisioner.provision.Fixtures;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.Placement;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * The controller against fabric8's CRUD mock API server and the fake Cinder. The mock has no
 * binder: where Kubernetes would bind a claim or release a volume, the test does it by hand.
 */
class ProvisioningTest {

  private io.fabric8.kubernetes.client.server.mock.KubernetesMockServer server;
  private KubernetesClient client;

  private final FakeCinderClient cinder = new FakeCinderClient();
  private final ProvisionerSettings settings = Fixtures.settings();
  private ClaimController controller;
  private Processed processed;

  @BeforeEach
  void start() {
    server = Cluster.newApiServer();
    client = server.createClient();
    controller =
        Cluster.controller(
            client,
            cinder,
            settings,
            new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
    processed = Processed.by(controller);
    controller.start();
    await("informers synced", controller::synced);
    // The first housekeeping asks Cinder for unfinished volumes up to 100 ms after the sync; a
    // failure a test queues for findVolumes must not be taken by it.
    await("the first housekeeping", () -> cinder.log().contains("findVolumes null"));
  }

  @AfterEach
  void stop() {
    controller.close();
    client.close();
    Cluster.destroy(server);
  }

  private static void await(String what, BooleanSupplier condition) {
    Cluster.await(what, condition, Duration.ofSeconds(10));
  }

  private StorageClass storageClass(
      String name, String provisioner, Map<String, String> params, String reclaim, String binding) {
    return Cluster.createClass(client, name, provisioner, params, reclaim, binding);
  }

  private StorageClass ourClass() {
    return storageClass(
        "cinder", ProvisionerSettings.DEFAULT_NAME, Map.of(), "Delete", "Immediate");
  }

  private PersistentVolumeClaim claim(
      String name, String className, String provisioner, Map<String, String> extra) {
    return Cluster.createClaim(client, name, className, provisioner, "Filesystem", extra);
  }

  private PersistentVolume pvOf(PersistentVolumeClaim c) {
    return client.persistentVolumes().withName(Names.pvName(c.getMetadata().getUid())).get();
  }

  private List<String> eventsOf(String name) {
    return client.events().v1().events().inAnyNamespace().list().getItems().stream()
        .filter(e -> e.getRegarding().getName().equals(name))
        .map(e -> e.getReason() + ": " + e.getNote())
        .toList();
  }

  private void release(PersistentVolume pv) {
    Cluster.release(client, pv);
  }

  @Test
  void aClaimBecomesAPvAndItsReleaseDeletesEverything() {
    ourClass();
    PersistentVolumeClaim c = claim("data", "cinder", ProvisionerSettings.DEFAULT_NAME, Map.of());
    await("PV", () -> pvOf(c) != null);
    PersistentVolume pv = pvOf(c);
    assertThat(pv.getSpec().getClaimRef().getUid()).isEqualTo(c.getMetadata().getUid());
    await(
        "the volume handed over to its PV",
        () ->
            Names.STATE_PROVISIONED.equals(
                cinder.volumes().get("vol-1").metadata().get(Names.META_STATE)));
    assertThat(pv.getSpec().getIscsi().getInitiatorName()).isEqualTo(settings.initiatorName());
    String secret = pv.getSpec().getIscsi().getSecretRef().getName();
    assertThat(client.secrets().inNamespace("standalone-cinder").withName(secret).get())
        .isNotNull();
    await(
        "claim annotated",
        () ->
            "vol-1"
                .equals(
                    client
                        .persistentVolumeClaims()
                        .inNamespace("apps")
                        .withName("data")
                        .get()
                        .getMetadata()
                        .getAnnotations()
                        .get(ClaimAnnotations.VOLUME_ID)));
    // One event, for the outcome: the claim was provisioned before it was worth telling that it
    // was under way (the slow case is CloningTest's held clone).
    await("success event", () -> eventsOf("data").size() == 1);
    assertThat(eventsOf("data"))
        .containsExactly(
            "ProvisioningSucceeded: Successfully provisioned volume "
                + pv.getMetadata().getName()
                + " (Cinder volume vol-1)");

    // What Kubernetes' binder does: bind the pair. A bound claim is not provisioned again.
    PersistentVolumeClaim bound =
        client.persistentVolumeClaims().inNamespace("apps").withName("data").get();
    bound.getSpec().setVolumeName(pv.getMetadata().getName());
    client.persistentVolumeClaims().inNamespace("apps").resource(bound).update();
    pv.setStatus(new PersistentVolumeStatusBuilder().withPhase("Bound").build());
    client.persistentVolumes().resource(pv).updateStatus();
    assertThat(cinder.log()).filteredOn(l -> l.startsWith("createVolume")).hasSize(1);

    client.persistentVolumeClaims().inNamespace("apps").withName("data").delete();
    release(client.persistentVolumes().withName(pv.getMetadata().getName()).get());
    await("PV deleted", () -> pvOf(c) == null);
    assertThat(cinder.volumes()).isEmpty();
    assertThat(cinder.attachments()).isEmpty();
    assertThat(client.secrets().inNamespace("standalone-cinder").list().getItems()).isEmpty();
  }

  /**
   * The loop's cache may lag behind a PV made a moment ago, and the loop no longer asks the API
   * server for every claim: a claim provisioned already, synced by a replica that has not seen its
   * PV, must leave the volume the PV holds as it is (not detach it as a crashed attempt's, export
   * it again or roll it back).
   */
  @Test
  void aClaimWhosePvTheCacheHasNotSeenLeavesItsVolumeAlone() {
    StorageClass sc = ourClass();
    PersistentVolumeClaim c = claim("data", "cinder", ProvisionerSettings.DEFAULT_NAME, Map.of());
    await("PV", () -> pvOf(c) != null);
    PersistentVolume pv = pvOf(c);
    String volumeId = pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    // The installed controller's last call, the hand-over after the PV's creation, may come after
    // the PV is seen: only the blind replica's calls are counted below.
    await("the hand-over", () -> cinder.log().contains("updateVolumeMetadata " + volumeId));
    List<String> attachments = cinder.volumes().get(volumeId).attachmentIds();
    int calls = cinder.log().size();

    // A replica whose informers have seen nothing yet: every PV is "not in the cache".
    CinderProvisioner blind =
        new CinderProvisioner(
            client,
            new org.standalonecinder.provisioner.controller.ClusterCache(
                client, Duration.ofMinutes(1)),
            new org.standalonecinder.provisioner.provision.VolumeProvisioner(
                cinder,
                new org.standalonecinder.provisioner.provision.KubernetesSecretStore(client),
                org.standalonecinder.provisioner.mapping.VolumeMappers.standard(),
                settings,
                org.standalonecinder.provisioner.cinder.Backoff.DEFAULT),
            null, // a plain claim: no clone to resolve
            null, // nor to expand
            settings);
    ProvisionResult result =
        blind.provision(
            new ProvisionRequest(c, sc, pv.getMetadata().getName(), Map.of(), detail -> {}));

    assertThat(result.state()).isEqualTo(ProvisionResult.State.NO_CHANGE);
    assertThat(cinder.log().subList(calls, cinder.log().size()))
        .containsExactly("findVolumes " + pv.getMetadata().getName());
    assertThat(cinder.volumes().get(volumeId).attachmentIds()).isEqualTo(attachments);
    assertThat(cinder.volumes().get(volumeId).status()).isEqualTo("in-use");
  }

  @Test
  void retainKeepsEverythingAndMarksTheVolumeAsThePvs() {
    storageClass("keep", ProvisionerSettings.DEFAULT_NAME, Map.of(), "Retain", "Immediate");
    // The hand-over after the PV's creation fails: the release repairs it.
    cinder.failNext(
        "updateVolumeMetadata", () -> new CinderException.Unavailable("down", 503, null, null));
    PersistentVolumeClaim c = claim("kept", "keep", ProvisionerSettings.DEFAULT_NAME, Map.of());
    await("PV", () -> pvOf(c) != null);
    String volume = pvOf(c).getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    await("the failed hand-over", () -> cinder.log().contains("updateVolumeMetadata " + volume));
    assertThat(cinder.volumes().get(volume).metadata())
        .containsEntry(Names.META_STATE, Names.STATE_PROVISIONING);
    release(pvOf(c));
    // The controller has worked on the PV as Released: whatever Retain means, it has been done.
    processed.await(
        Processed.volumeKey(pvOf(c).getMetadata().getName()),
        pv ->
            pv != null
                && ((PersistentVolume) pv).getStatus() != null
                && "Released".equals(((PersistentVolume) pv).getStatus().getPhase()));
    assertThat(pvOf(c)).isNotNull();
    assertThat(cinder.volumes()).hasSize(1);
    assertThat(cinder.volumes().get(volume).metadata())
        .as("an admin who deletes the retained PV keeps the volume: no sweep takes it")
        .containsEntry(Names.META_STATE, Names.STATE_PROVISIONED);
    assertThat(client.secrets().inNamespace("standalone-cinder").list().getItems()).hasSize(1);
  }

  /**
   * A PV of this provisioner's name that another instance made (the Go provisioner's, whose
   * identity changed at each start): released, it is left alone, and the admin is told once what it
   * is and how to take it over, not at every resync.
   */
  @Test
  void aReleasedPvOfAnotherIdentityIsLeftAloneAndToldOnce() {
    PersistentVolume pv =
        new io.fabric8.kubernetes.api.model.PersistentVolumeBuilder()
            .withNewMetadata()
            .withName("pvc-go")
            .addToAnnotations(ClaimAnnotations.PROVISIONED_BY, ProvisionerSettings.DEFAULT_NAME)
            .addToAnnotations(Names.ANN_IDENTITY, "go-identity-1")
            .addToAnnotations(ClaimAnnotations.VOLUME_ID, "vol-go")
            .endMetadata()
            .withNewSpec()
            .withPersistentVolumeReclaimPolicy("Delete")
            .withNewHostPath("/nowhere", null)
            .endSpec()
            .build();
    client.persistentVolumes().resource(pv).create();
    release(client.persistentVolumes().withName("pvc-go").get());
    await("the warning", () -> !eventsOf("pvc-go").isEmpty());
    // Looked at again (any change of the PV, or a resync): nothing more is said.
    PersistentVolume again = client.persistentVolumes().withName("pvc-go").get();
    again.getMetadata().setLabels(Map.of("looked-at", "again"));
    client.persistentVolumes().resource(again).update();
    processed.await(
        Processed.volumeKey("pvc-go"), p -> p != null && p.getMetadata().getLabels() != null);

    assertThat(eventsOf("pvc-go"))
        .singleElement()
        .asString()
        .startsWith("VolumeNotMine: was released, but another provisioner instance made it")
        .contains("identity 'go-identity-1'", "this one is 'cluster-a'")
        .contains("Cinder volume vol-go is left as it is")
        .contains("ADOPT_IDENTITIES");
    assertThat(client.persistentVolumes().withName("pvc-go").get()).isNotNull();
    assertThat(cinder.log()).noneMatch(l -> l.contains("vol-go"));
  }

  @Test
  void waitForFirstConsumerWaitsForTheSelectedNode() throws Exception {
    storageClass(
        "late", ProvisionerSettings.DEFAULT_NAME, Map.of(), "Delete", "WaitForFirstConsumer");
    PersistentVolumeClaim c = claim("late", "late", ProvisionerSettings.DEFAULT_NAME, Map.of());
    processed.claim("apps", "late");
    assertThat(pvOf(c)).isNull();
    assertThat(Cluster.claimCalls(cinder)).isEmpty();
    client
        .nodes()
        .resource(
            new io.fabric8.kubernetes.api.model.NodeBuilder()
                .withNewMetadata()
                .withName("node-1")
                .withLabels(Map.of(Placement.DEFAULT_ZONE_LABEL, "az-1"))
                .endMetadata()
                .build())
        .create();
    select("late", "node-1");
    await("PV", () -> pvOf(c) != null);
    assertThat(cinder.volumes().values())
        .singleElement()
        .extracting(v -> v.availabilityZone())
        .isEqualTo("az-1");
    assertThat(
            pvOf(c)
                .getSpec()
                .getNodeAffinity()
                .getRequired()
                .getNodeSelectorTerms()
                .get(0)
                .getMatchExpressions()
                .get(0)
                .getValues())
        .containsExactly("az-1");
  }

  /**
   * A node that is gone cannot take the pod: the scheduler is made to choose again. A value that is
   * no node name (anyone who may update the claim can write one) is never looked up: it would reach
   * another URL of the API server; it is taken off too, and the event says so in words.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a node that is gone | node-gone | the node node-gone the scheduler selected",
        "a path out of the nodes | ../namespaces/kube-system/secrets/x | is not a node name",
        "a query | node-1?watch=true | is not a node name",
        "upper case | Node-1 | is not a node name"
      })
  void aSelectedNodeThatCannotTakeThePodIsTakenOffTheClaim(String name, String node, String said)
      throws Exception {
    storageClass(
        "late", ProvisionerSettings.DEFAULT_NAME, Map.of(), "Delete", "WaitForFirstConsumer");
    PersistentVolumeClaim c = claim("late", "late", ProvisionerSettings.DEFAULT_NAME, Map.of());
    select("late", node);
    await(
        "the selection taken off",
        () ->
            !client
                .persistentVolumeClaims()
                .inNamespace("apps")
                .withName("late")
                .get()
                .getMetadata()
                .getAnnotations()
                .containsKey(ClaimAnnotations.SELECTED_NODE));
    assertThat(pvOf(c)).isNull();
    assertThat(Cluster.claimCalls(cinder)).isEmpty();
    await("the event", () -> eventsOf("late").stream().anyMatch(e -> e.contains(said)));
    assertThat(eventsOf("late")).noneMatch(e -> e.contains("Exception") || e.contains("https://"));
  }

  private void select(String claim, String node) {
    client
        .persistentVolumeClaims()
        .inNamespace("apps")
        .withName(claim)
        .edit(
            x -> {
              x.getMetadata().getAnnotations().put(ClaimAnnotations.SELECTED_NODE, node);
              return x;
            });
  }

  @Test
  void claimsOfAnotherProvisionerAreIgnored() throws Exception {
    storageClass("other", "example.com/other", Map.of(), "Delete", "Immediate");
    ourClass();
    PersistentVolumeClaim a = claim("a", "other", "example.com/other", Map.of());
    PersistentVolumeClaim b = claim("b", "cinder", "example.com/other", Map.of());
    processed.claim("apps", "a");
    processed.claim("apps", "b");
    assertThat(pvOf(a)).isNull();
    assertThat(pvOf(b)).isNull();
    assertThat(Cluster.claimCalls(cinder)).isEmpty();
    assertThat(eventsOf("a")).isEmpty();
  }

  @Test
  void anUnknownClassParameterIsAWarningThatNamesIt() {
    storageClass(
        "typo",
        ProvisionerSettings.DEFAULT_NAME,
        Map.of("smartClone", "true", "iops", "9"),
        "Delete",
        "Immediate");
    claim("typo", "typo", ProvisionerSettings.DEFAULT_NAME, Map.of());
    await("failure event", () -> eventsOf("typo").size() == 1);
    assertThat(eventsOf("typo").get(0))
        .startsWith("ProvisioningFailed: StorageClass parameters:")
        .contains("unknown parameter 'iops'");
    assertThat(Cluster.claimCalls(cinder)).isEmpty();
    Event e =
        client.events().v1().events().inNamespace("apps").list().getItems().stream()
            .filter(x -> x.getReason().equals("ProvisioningFailed"))
            .findFirst()
            .orElseThrow();
    assertThat(e.getType()).isEqualTo("Warning");
    assertThat(e.getReportingController()).isEqualTo("standalone-cinder");
  }

  @Test
  void aPassingOutageIsRetriedUntilItWorks() {
    ourClass();
    cinder.failNext(
        "createAttachment",
        () -> new CinderException.Unavailable("Cinder down", 503, "req-1", null));
    PersistentVolumeClaim c = claim("retry", "cinder", ProvisionerSettings.DEFAULT_NAME, Map.of());
    await("PV", () -> pvOf(c) != null);
    assertThat(eventsOf("retry"))
        .anyMatch(s -> s.startsWith("ProvisioningFailed: create") || s.contains("Cinder down"));
    assertThat(cinder.volumes()).hasSize(1);
  }

  @Test
  void aLastingOutageEndsWithAWarningAndNothingLeft() {
    ourClass();
    for (int i = 0; i < 3; i++) {
      cinder.failNext(
          "completeAttachment",
          () -> new CinderException.Unavailable("Cinder down", 503, "req-1", null));
    }
    PersistentVolumeClaim c = claim("down", "cinder", ProvisionerSettings.DEFAULT_NAME, Map.of());
    await(
        "gave up",
        () -> eventsOf("down").stream().anyMatch(s -> s.contains("gave up after 3 attempts")));
    assertThat(pvOf(c)).isNull();
    assertThat(cinder.volumes()).isEmpty();
    assertThat(cinder.attachments()).isEmpty();
  }
}
