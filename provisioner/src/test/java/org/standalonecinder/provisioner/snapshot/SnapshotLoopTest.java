package org.standalonecinder.provisioner.snapshot;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.TypedLocalObjectReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.app.Wiring;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;
import org.standalonecinder.provisioner.cinder.Snapshot;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.provision.Fixtures;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * The snapshot loop and the claim loop on fabric8's mock API server with the fake Cinder; what the
 * snapshot-controller does is done by hand ({@link #controllerBinds}, {@link #controllerDeletes}).
 */
abstract class SnapshotLoopTest {

  static final String DRIVER = ProvisionerSettings.DEFAULT_NAME;
  static final long GIB = 1L << 30;

  io.fabric8.kubernetes.client.server.mock.KubernetesMockServer server;
  KubernetesClient client;
  final FakeCinderClient cinder = new FakeCinderClient();
  final ProvisionerSettings settings = Fixtures.settings();
  Wiring.Parts parts;
  final io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
      new io.micrometer.core.instrument.simple.SimpleMeterRegistry();

  static final Duration WAIT = Duration.ofSeconds(10);

  /** The snapshot loop's timings and limits for this class's tests. */
  SnapshotController.Timing timing() {
    return Cluster.QUICK;
  }

  @org.junit.jupiter.api.BeforeEach
  void start() {
    server = Cluster.newApiServer();
    client = server.createClient();
    parts =
        Cluster.parts(
            client,
            cinder,
            settings,
            registry,
            org.standalonecinder.provisioner.provision.CopyLimits.DEFAULT,
            timing());
    parts.controller().start();
    parts.snapshots().start();
    Cluster.await("informers synced", parts.controller()::synced, Duration.ofSeconds(10));
    Cluster.await("snapshot API found", parts.snapshots()::serving, Duration.ofSeconds(10));
  }

  @org.junit.jupiter.api.AfterEach
  void stop() {
    parts.snapshots().close();
    parts.controller().close();
    client.close();
    Cluster.destroy(server);
  }

  /** A claim of our class, provisioned and bound; its PV. */
  PersistentVolume boundClaim(String name) {
    if (client.storage().v1().storageClasses().withName("cinder").get() == null) {
      Cluster.createClass(client, "cinder", Map.of());
    }
    PersistentVolumeClaim claim = Cluster.createClaim(client, name, "cinder");
    return Cluster.bind(client, claim);
  }

  /** A PV of another provisioner, bound to a claim of the same name. */
  PersistentVolume foreignClaim(String name) {
    PersistentVolumeClaim claim =
        Cluster.createClaim(client, name, "other", "other.example.com/csi", "Filesystem", Map.of());
    PersistentVolume pv =
        new io.fabric8.kubernetes.api.model.PersistentVolumeBuilder()
            .withNewMetadata()
            .withName("pv-" + name)
            .withAnnotations(
                Map.of(
                    ClaimAnnotations.PROVISIONED_BY,
                    "other.example.com/csi",
                    ClaimAnnotations.VOLUME_ID,
                    "vol-foreign"))
            .endMetadata()
            .withNewSpec()
            .withNewClaimRef()
            .withNamespace("apps")
            .withName(name)
            .withUid(claim.getMetadata().getUid())
            .endClaimRef()
            .endSpec()
            .build();
    client.persistentVolumes().resource(pv).create();
    client
        .persistentVolumeClaims()
        .inNamespace("apps")
        .withName(name)
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            "{\"spec\":{\"volumeName\":\"pv-" + name + "\"}}");
    Cluster.claimBound(client, "apps", name, "1Gi");
    Cluster.await(
        "PV in the cache",
        () ->
            parts.snapshots() != null
                && client.persistentVolumes().withName("pv-" + name).get() != null,
        Duration.ofSeconds(5));
    return pv;
  }

  void snapshotClass(String name, String driver, String policy, Map<String, String> parameters) {
    GenericKubernetesResource c = new GenericKubernetesResource();
    c.setApiVersion(SnapshotApi.API_VERSION);
    c.setKind("VolumeSnapshotClass");
    c.setMetadata(new ObjectMetaBuilder().withName(name).build());
    c.setAdditionalProperty("driver", driver);
    c.setAdditionalProperty("deletionPolicy", policy);
    c.setAdditionalProperty("parameters", parameters);
    client.genericKubernetesResources(SnapshotApi.CLASSES).resource(c).create();
  }

  /** A VolumeSnapshot of the claim {@code claim}; the snapshot as created. */
  GenericKubernetesResource volumeSnapshot(String name, String claim, String className) {
    return volumeSnapshot("apps", name, claim, className);
  }

  /** A VolumeSnapshot in {@code namespace} of its claim {@code claim}. */
  GenericKubernetesResource volumeSnapshot(
      String namespace, String name, String claim, String className) {
    GenericKubernetesResource s = new GenericKubernetesResource();
    s.setApiVersion(SnapshotApi.API_VERSION);
    s.setKind("VolumeSnapshot");
    s.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(namespace).build());
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("source", Map.of("persistentVolumeClaimName", claim));
    if (className != null) {
      spec.put("volumeSnapshotClassName", className);
    }
    s.setAdditionalProperty("spec", spec);
    return client
        .genericKubernetesResources(SnapshotApi.SNAPSHOTS)
        .inNamespace(namespace)
        .resource(s)
        .create();
  }

  /** A content made by an admin (a pre-provisioned snapshot, or one naming any volume). */
  GenericKubernetesResource content(
      String name, Map<String, Object> source, String policy, String snapshot) {
    GenericKubernetesResource c = new GenericKubernetesResource();
    c.setApiVersion(SnapshotApi.API_VERSION);
    c.setKind("VolumeSnapshotContent");
    c.setMetadata(
        new ObjectMetaBuilder()
            .withName(name)
            .withFinalizers(SnapshotApi.CONTENT_FINALIZER)
            .build());
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("driver", DRIVER);
    spec.put("deletionPolicy", policy);
    spec.put("source", source);
    spec.put(
        "volumeSnapshotRef",
        Map.of(
            "apiVersion",
            SnapshotApi.API_VERSION,
            "kind",
            "VolumeSnapshot",
            "namespace",
            "apps",
            "name",
            snapshot));
    c.setAdditionalProperty("spec", spec);
    return client.genericKubernetesResources(SnapshotApi.CONTENTS).resource(c).create();
  }

  Content contentNow(String name) {
    GenericKubernetesResource r =
        client.genericKubernetesResources(SnapshotApi.CONTENTS).withName(name).get();
    return r == null ? null : Content.of(r);
  }

  /** What the snapshot-controller does to a content it finds: its finalizer. */
  void controllerBinds(String contentName) {
    client
        .genericKubernetesResources(SnapshotApi.CONTENTS)
        .withName(contentName)
        .patch(
            PatchContext.of(PatchType.JSON),
            "[{\"op\":\"add\",\"path\":\"/metadata/finalizers\",\"value\":[\""
                + SnapshotApi.CONTENT_FINALIZER
                + "\"]}]");
  }

  /** What the snapshot-controller does when the VolumeSnapshot of a content goes. */
  void controllerDeletes(String contentName) {
    var content = client.genericKubernetesResources(SnapshotApi.CONTENTS).withName(contentName);
    content.patch(
        PatchContext.of(PatchType.JSON_MERGE),
        "{\"metadata\":{\"annotations\":{\"" + SnapshotApi.BEING_DELETED + "\":\"yes\"}}}");
    content.delete();
  }

  List<Snapshot> cinderSnapshots() {
    return List.copyOf(cinder.snapshots().values());
  }

  List<String> eventsAbout(String name) {
    return client.events().v1().events().inAnyNamespace().list().getItems().stream()
        .filter(e -> name.equals(e.getRegarding().getName()))
        .map(e -> e.getReason() + ": " + e.getNote())
        .toList();
  }

  /** {@code standalone_cinder_snapshots_total} of an operation and result. */
  double counted(String operation, String result) {
    var c =
        registry
            .find("standalone_cinder_snapshots")
            .tags("operation", operation, "result", result)
            .counter();
    return c == null ? 0 : c.count();
  }

  void ourClass() {
    if (client.storage().v1().storageClasses().withName("cinder").get() == null) {
      Cluster.createClass(client, "cinder", Map.of());
    }
  }

  /** What the snapshot-controller writes to a snapshot once its content is ready. */
  void controllerReady(String snapshot, String content) {
    client
        .genericKubernetesResources(SnapshotApi.SNAPSHOTS)
        .inNamespace("apps")
        .withName(snapshot)
        .subresource("status")
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            "{\"status\":{\"readyToUse\":true,\"restoreSize\":\"1Gi\","
                + "\"boundVolumeSnapshotContentName\":\""
                + content
                + "\"}}");
  }

  /** A claim of our class restored from {@code snap} (or filled from another kind). */
  PersistentVolumeClaim claimFrom(
      String name, String size, String mode, String group, String kind) {
    PersistentVolumeClaim c = Fixtures.claimOf(null, name, size, mode);
    c.getMetadata()
        .setAnnotations(
            Map.of(ClaimAnnotations.STORAGE_PROVISIONER, ProvisionerSettings.DEFAULT_NAME));
    c.getSpec().setDataSource(new TypedLocalObjectReference(group, kind, "snap"));
    return client.persistentVolumeClaims().inNamespace("apps").resource(c).create();
  }

  PersistentVolumeClaim restore(String name, String size, String mode) {
    return claimFrom(name, size, mode, "snapshot.storage.k8s.io", "VolumeSnapshot");
  }

  /** Whether the content's status names its Cinder snapshot or backup. */
  boolean recorded(String content) {
    Content c = contentNow(content);
    return c != null && c.status() != null && c.status().snapshotHandle() != null;
  }

  /** The name of the one content there is. */
  String onlyContent() {
    return client
        .genericKubernetesResources(SnapshotApi.CONTENTS)
        .list()
        .getItems()
        .get(0)
        .getMetadata()
        .getName();
  }

  /** An available volume in the fake Cinder that no cluster made. */
  void seedVolume(String id, int sizeGib) {
    cinder.seed(
        new org.standalonecinder.provisioner.cinder.Volume(
            id, id, "available", sizeGib, "nova", "lab", Map.of(), null, null, false, List.of()));
  }
}
