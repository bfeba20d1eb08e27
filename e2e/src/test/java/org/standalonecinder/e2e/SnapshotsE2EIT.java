package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.demo.Claims;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.Waits;
import org.standalonecinder.provisioner.cinder.Snapshot;

/**
 * VolumeSnapshots of the provisioner's claims with the real snapshot-controller
 * (external-snapshotter v4.2.1, started by dev/kube-local --snapshots) and the real Cinder: the
 * controller binds the content the provisioner made and copies its status; deleting the snapshot
 * deletes the Cinder snapshot (Delete) or keeps it (Retain); a kept one is imported again by an
 * admin's content; a claim deleted while its volume has snapshots keeps the volume until they are
 * gone.
 */
@ExtendWith(Installed.class)
@org.junit.jupiter.api.Order(5)
// The tests run at once (each has its own namespace and claims, and mostly waits for the node and
// the snapshot-controller); the class as a whole runs alone, as the others do: run beside them it
// met InstallDocsE2EIT's clean-up, which takes the installation's RBAC away.
class SnapshotsE2EIT {

  static final Duration READY = Duration.ofSeconds(90);

  static final ResourceDefinitionContext SNAPSHOTS =
      new ResourceDefinitionContext.Builder()
          .withGroup("snapshot.storage.k8s.io")
          .withVersion("v1")
          .withKind("VolumeSnapshot")
          .withPlural("volumesnapshots")
          .withNamespaced(true)
          .build();

  static final ResourceDefinitionContext CONTENTS =
      new ResourceDefinitionContext.Builder()
          .withGroup("snapshot.storage.k8s.io")
          .withVersion("v1")
          .withKind("VolumeSnapshotContent")
          .withPlural("volumesnapshotcontents")
          .withNamespaced(false)
          .build();

  static final String CLASSES =
      """
      apiVersion: snapshot.storage.k8s.io/v1
      kind: VolumeSnapshotClass
      metadata: {name: e2e-snap}
      driver: openstack.org/standalone-cinder
      deletionPolicy: Delete
      ---
      apiVersion: snapshot.storage.k8s.io/v1
      kind: VolumeSnapshotClass
      metadata: {name: e2e-snap-retain}
      driver: openstack.org/standalone-cinder
      deletionPolicy: Retain
      """;

  @BeforeAll
  static void theClusterServesSnapshots(LocalInstall it) {
    assertThat(it.kubeEnv.get("KUBE_LOCAL_SNAPSHOTS"))
        .as(
            "the control plane runs without the snapshot API: dev/kube-local/start.sh --snapshots"
                + " starts it with the real snapshot-controller (dev/test.sh does)")
        .isEqualTo("1");
    // Once, before the tests: they run at once, and two creates of one object collide.
    it.kubectl.ok(ClaimLifecycleE2EIT.CLASSES, "apply", "-f", "-");
    it.kubectl.ok(CLASSES, "apply", "-f", "-");
  }

  static String snapshot(String ns, String name, String claim, String className) {
    return """
        apiVersion: snapshot.storage.k8s.io/v1
        kind: VolumeSnapshot
        metadata: {name: %s, namespace: %s}
        spec:
          volumeSnapshotClassName: %s
          source: {persistentVolumeClaimName: %s}
        """
        .formatted(name, ns, className, claim);
  }

  static GenericKubernetesResource get(LocalInstall it, String ns, String name) {
    return it.admin.genericKubernetesResources(SNAPSHOTS).inNamespace(ns).withName(name).get();
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> status(GenericKubernetesResource r) {
    Object s = r == null ? null : r.getAdditionalProperties().get("status");
    return s instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }

  /** Waits until the snapshot-controller says the snapshot is ready; its status then. */
  static Map<String, Object> ready(LocalInstall it, String ns, String name) {
    Waits.await(
        "VolumeSnapshot " + ns + "/" + name + " ready",
        () -> Boolean.TRUE.equals(status(get(it, ns, name)).get("readyToUse")),
        READY);
    return status(get(it, ns, name));
  }

  static Snapshot cinderSnapshotOf(LocalInstall it, String contentName) {
    var found = it.cinder.findSnapshots(contentName, Map.of());
    assertThat(found).as("Cinder snapshots named " + contentName).hasSize(1);
    return found.get(0);
  }

  @Test
  @Execution(ExecutionMode.CONCURRENT)
  void aSnapshotIsBoundByTheSnapshotControllerAndItsDeletionTakesTheCinderSnapshot(LocalInstall it)
      throws Exception {
    String ns = it.namespace("e2e-snap");
    // The documented example, as written, in a namespace of its own.
    String example =
        java.nio.file.Files.readString(
                it.root.resolve("manifests/examples/volumesnapshotclass.yaml"))
            .replace("namespace: default", "namespace: " + ns);
    it.kubectl.ok(example, "apply", "-f", "-");
    it.kubectl.ok(Claims.yaml(ns, "data", "e2e-cinder", ""), "apply", "-f", "-");
    PersistentVolume pv = it.claims.bound(ns, "data");
    String volumeId = pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    ready(it, ns, "data-snapshot");
    it.kubectl.ok(null, "delete", "volumesnapshot", "data-snapshot", "-n", ns, "--timeout=90s");

    it.kubectl.ok(snapshot(ns, "first", "data", "e2e-snap"), "apply", "-f", "-");
    Map<String, Object> status = ready(it, ns, "first");
    String uid = get(it, ns, "first").getMetadata().getUid();
    assertThat(status.get("boundVolumeSnapshotContentName")).isEqualTo("snapcontent-" + uid);
    assertThat(status.get("restoreSize")).isEqualTo("1Gi");
    assertThat(status.get("error")).isNull();
    Snapshot s = cinderSnapshotOf(it, "snapcontent-" + uid);
    assertThat(s.volumeId()).isEqualTo(volumeId);
    assertThat(s.status()).isEqualTo("available");

    // The claim goes while its volume has a snapshot: the PV goes through release, the volume
    // stays (Cinder would refuse it, and cascade would take the user's snapshot).
    it.kubectl.ok(null, "delete", "pvc", "data", "-n", ns, "--wait=false");
    Waits.await(
        "the provisioner telling why the volume stays",
        () ->
            it.admin.events().v1().events().inAnyNamespace().list().getItems().stream()
                .anyMatch(
                    e ->
                        pv.getMetadata().getName().equals(e.getRegarding().getName())
                            && e.getNote() != null
                            && e.getNote().contains("has snapshots")),
        READY);
    assertThat(it.cinder.getVolume(volumeId)).isPresent();

    it.kubectl.ok(null, "delete", "volumesnapshot", "first", "-n", ns, "--timeout=90s");
    Waits.await(
        "the content gone",
        () ->
            it.admin.genericKubernetesResources(CONTENTS).withName("snapcontent-" + uid).get()
                == null,
        READY);
    assertThat(it.cinder.getSnapshot(s.id())).isEmpty();
    Waits.await(
        "the volume deleted once its snapshot is gone",
        () -> it.cinder.getVolume(volumeId).isEmpty(),
        Duration.ofMinutes(3));
  }

  @Test
  @Execution(ExecutionMode.CONCURRENT)
  void aRetainedSnapshotOutlivesItsObjectsAndIsImportedAgainByAnAdmin(LocalInstall it)
      throws Exception {
    String ns = it.namespace("e2e-snap-keep");
    it.kubectl.ok(Claims.yaml(ns, "data", "e2e-cinder", ""), "apply", "-f", "-");
    PersistentVolume pv = it.claims.bound(ns, "data");

    it.kubectl.ok(snapshot(ns, "kept", "data", "e2e-snap-retain"), "apply", "-f", "-");
    ready(it, ns, "kept");
    String content = "snapcontent-" + get(it, ns, "kept").getMetadata().getUid();
    Snapshot s = cinderSnapshotOf(it, content);
    it.kubectl.ok(null, "delete", "volumesnapshot", "kept", "-n", ns, "--timeout=90s");
    // Retain: the content stays until an admin deletes it, and its Cinder snapshot after that.
    it.kubectl.ok(null, "delete", "volumesnapshotcontent", content, "--timeout=90s");
    assertThat(it.cinder.getSnapshot(s.id())).isPresent();

    // An admin imports it: a content naming the Cinder snapshot, a VolumeSnapshot naming the
    // content.
    it.kubectl.ok(
        """
        apiVersion: snapshot.storage.k8s.io/v1
        kind: VolumeSnapshotContent
        metadata: {name: %s-imported}
        spec:
          driver: openstack.org/standalone-cinder
          deletionPolicy: Delete
          source: {snapshotHandle: %s}
          volumeSnapshotRef: {name: imported, namespace: %s}
        ---
        apiVersion: snapshot.storage.k8s.io/v1
        kind: VolumeSnapshot
        metadata: {name: imported, namespace: %s}
        spec:
          source: {volumeSnapshotContentName: %s-imported}
        """
            .formatted(ns, s.id(), ns, ns, ns),
        "apply",
        "-f",
        "-");
    Map<String, Object> status = ready(it, ns, "imported");
    assertThat(status.get("restoreSize")).isEqualTo("1Gi");

    // Under Delete the import's deletion takes the Cinder snapshot, then the claim its volume.
    it.kubectl.ok(null, "delete", "volumesnapshot", "imported", "-n", ns, "--timeout=90s");
    Waits.await(
        "the imported snapshot deleted in Cinder",
        () -> it.cinder.getSnapshot(s.id()).isEmpty(),
        READY);
    ClaimLifecycleE2EIT.deleteAndAwaitTearDown(
        it, ns, "data", pv, pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID));
  }

  static String restored(String ns, String name, String size, String snapshot) {
    return """
        apiVersion: v1
        kind: PersistentVolumeClaim
        metadata: {name: %s, namespace: %s}
        spec:
          storageClassName: e2e-cinder
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: %s}}
          dataSource: {apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: %s}
        """
        .formatted(name, ns, size, snapshot);
  }

  /**
   * A Pod on the real node writes a file; the claim is snapshotted while the Pod still has it
   * mounted (after a sync: crash-consistent, nothing is frozen); claims restored from the snapshot,
   * one of the snapshot's size and one larger, are each read by another Pod and hold the file; the
   * snapshot and every claim deleted leave nothing in Cinder.
   */
  @Test
  @Execution(ExecutionMode.CONCURRENT)
  void aPodsFileIsInEveryClaimRestoredFromItsSnapshot(LocalInstall it) throws Exception {
    org.standalonecinder.demo.LocalNode node = KernelNodeE2EIT.theNode();
    assertThat(node.runsKubelet())
        .as("the node runs a kubelet (dev/node-local --kubelet)")
        .isTrue();
    String ns = it.namespace("e2e-restore");
    it.kubectl.ok(Claims.yaml(ns, "data", "e2e-cinder", ""), "apply", "-f", "-");
    PersistentVolume pv = it.claims.bound(ns, "data");
    String word = "snapshotted-in-" + ns;
    it.pods.namespaceReady(ns);
    it.kubectl.ok(
        org.standalonecinder.demo.Pods.yaml(
            ns,
            "writer",
            "data",
            node.name(),
            "echo "
                + word
                + " > /data/hello && sync && touch /data/synced"
                + " && trap 'exit 0' TERM && while :; do sleep 1; done"),
        "create",
        "-f",
        "-");
    it.pods.running(ns, "writer", KubeletCases.POD);
    Waits.await(
        "the writer's file synced",
        () ->
            node.run(
                    "ls /var/lib/kubelet/pods/*/volumes/kubernetes.io~iscsi/"
                        + pv.getMetadata().getName()
                        + "/synced",
                    Duration.ofSeconds(20))
                .ok(),
        KubeletCases.POD);

    it.kubectl.ok(snapshot(ns, "in-use", "data", "e2e-snap"), "apply", "-f", "-");
    ready(it, ns, "in-use");
    it.pods.delete(ns, "writer", KubeletCases.POD);

    it.kubectl.ok(
        restored(ns, "same", "1Gi", "in-use") + "---\n" + restored(ns, "larger", "2Gi", "in-use"),
        "apply",
        "-f",
        "-");
    java.util.List<PersistentVolume> made = new java.util.ArrayList<>();
    for (String claim : java.util.List.of("same", "larger")) {
      PersistentVolume restoredPv = it.claims.bound(ns, claim);
      made.add(restoredPv);
      assertThat(restoredPv.getMetadata().getAnnotations())
          .containsEntry("standalone-cinder.io/restored-from", ns + "/in-use");
      it.kubectl.ok(
          org.standalonecinder.demo.Pods.yaml(
              ns, "read-" + claim, claim, node.name(), "cat /data/hello > /dev/termination-log"),
          "create",
          "-f",
          "-");
      org.standalonecinder.demo.Pods.Ended read =
          it.pods.ended(ns, "read-" + claim, KubeletCases.POD);
      assertThat(read.succeeded()).as(read.toString()).isTrue();
      assertThat(read.message()).as("the file, in " + claim).isEqualTo(word);
      it.pods.delete(ns, "read-" + claim, KubeletCases.POD);
    }
    assertThat(
            it.cinder
                .getVolume(
                    made.get(1).getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID))
                .orElseThrow()
                .sizeGib())
        .isEqualTo(2);

    it.kubectl.ok(null, "delete", "volumesnapshot", "in-use", "-n", ns, "--timeout=90s");
    for (PersistentVolume each : made) {
      ClaimLifecycleE2EIT.deleteAndAwaitTearDown(
          it,
          ns,
          each.getSpec().getClaimRef().getName(),
          each,
          each.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID));
    }
    ClaimLifecycleE2EIT.deleteAndAwaitTearDown(
        it, ns, "data", pv, pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID));
  }
}
