package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.standalonecinder.e2e.SnapshotObjects.CONTENTS;
import static org.standalonecinder.e2e.SnapshotObjects.READY;
import static org.standalonecinder.e2e.SnapshotObjects.cinderSnapshotOf;
import static org.standalonecinder.e2e.SnapshotObjects.get;
import static org.standalonecinder.e2e.SnapshotObjects.readHello;
import static org.standalonecinder.e2e.SnapshotObjects.ready;
import static org.standalonecinder.e2e.SnapshotObjects.restored;
import static org.standalonecinder.e2e.SnapshotObjects.snapshot;
import static org.standalonecinder.e2e.SnapshotObjects.status;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.demo.Claims;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.Waits;
import org.standalonecinder.provisioner.cinder.Snapshot;

/**
 * VolumeSnapshots of the provisioner's claims with the suite's snapshot-controller stand-in ({@link
 * org.standalonecinder.e2e.standin.SnapshotControllerStandIn}, playing external-snapshotter
 * v4.2.1's on the snapshot API's CRDs) and the real Cinder: the stand-in binds the content the
 * provisioner made and copies its status; deleting the snapshot deletes the Cinder snapshot
 * (Delete) or keeps it (Retain); a kept one is imported again by an admin's content; a claim
 * deleted while its volume has snapshots keeps the volume until they are gone; a snapshot through a
 * {@code type: backup} class is a Cinder backup, which outlives the claim and its volume and fills
 * a new claim.
 */
// The tests run at once (each has its own namespace and claims, and mostly waits for the node and
// the snapshot-controller stand-in), in NodesE2EIT.
abstract class SnapshotCases {

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
      ---
      apiVersion: snapshot.storage.k8s.io/v1
      kind: VolumeSnapshotClass
      metadata: {name: e2e-backup}
      driver: openstack.org/standalone-cinder
      deletionPolicy: Delete
      parameters: {type: backup}
      """;

  @BeforeAll
  static void theClusterServesSnapshots(LocalInstall it) {
    requireSnapshotController(it);
    // Once, before the tests: they run at once, and two creates of one object collide (NodesE2EIT
    // made them already, before its nested classes; this keeps the cases whole on their own).
    it.kubectl.ok(ClaimLifecycleE2EIT.CLASSES, "apply", "-f", "-");
    it.kubectl.ok(CLASSES, "apply", "-f", "-");
  }

  /**
   * Fails unless dev/kube-local serves the snapshot API and the suite's snapshot-controller
   * stand-in runs (it plays the cluster's snapshot-controller: docs/testing.md).
   */
  static void requireSnapshotController(LocalInstall it) {
    assertThat(it.kubeEnv.get("KUBE_LOCAL_SNAPSHOTS"))
        .as(
            "the control plane runs without the snapshot API: dev/kube-local/start.sh --snapshots"
                + " installs its CRDs (dev/test.sh does)")
        .isEqualTo("1");
    var standIn = Installation.snapshotStandIn;
    assertThat(standIn != null && standIn.running())
        .as("the snapshot-controller stand-in runs")
        .isTrue();
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
      assertThat(readHello(it, node, ns, claim)).as("the file, in " + claim).isEqualTo(word);
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

  /** The file that holds a volume of the lab's file backend (the class e2e-cinder's). */
  static java.nio.file.Path labFile(LocalInstall it, String volumeId) {
    return java.nio.file.Path.of(
        it.cinderEnv.get("CINDER_LOCAL_STATE"), "cinder", "file-volumes", "volume-" + volumeId);
  }

  /**
   * What a backup class is for: the claim's VolumeSnapshot through a {@code type: backup} class is
   * a Cinder backup (no Cinder snapshot); the claim and its volume are deleted, and the backup
   * still fills a new claim with the volume's bytes; the VolumeSnapshot deleted, Cinder has no
   * backup left. The bytes are written to and read from the lab backend's volume files: the Pods'
   * path is the snapshot test's, and the node is the suite's narrowest part.
   */
  @Test
  @Execution(ExecutionMode.CONCURRENT)
  void aBackupOutlivesItsClaimAndVolumeAndFillsANewClaim(LocalInstall it) throws Exception {
    String ns = it.namespace("e2e-backup");
    it.kubectl.ok(Claims.yaml(ns, "data", "e2e-cinder", ""), "apply", "-f", "-");
    PersistentVolume pv = it.claims.bound(ns, "data");
    String volumeId = pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    byte[] bytes = ("backed up in " + ns).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    java.nio.file.Files.write(labFile(it, volumeId), bytes, java.nio.file.StandardOpenOption.WRITE);

    it.kubectl.ok(snapshot(ns, "nightly", "data", "e2e-backup"), "apply", "-f", "-");
    Map<String, Object> status = ready(it, ns, "nightly");
    assertThat(status.get("restoreSize")).isEqualTo("1Gi");
    String content = "snapcontent-" + get(it, ns, "nightly").getMetadata().getUid();
    var backups = it.cinder.findBackups(content, Map.of());
    assertThat(backups).as("Cinder backups named " + content).hasSize(1);
    var backup = backups.get(0);
    assertThat(backup.volumeId()).isEqualTo(volumeId);
    assertThat(backup.status()).isEqualTo("available");
    assertThat(it.cinder.findSnapshots(content, Map.of())).as("no Cinder snapshot").isEmpty();

    // The claim and its volume go: a backup does not keep the volume as a snapshot does.
    ClaimLifecycleE2EIT.deleteAndAwaitTearDown(it, ns, "data", pv, volumeId);
    assertThat(it.cinder.getVolume(volumeId)).isEmpty();

    it.kubectl.ok(restored(ns, "back", "1Gi", "nightly"), "apply", "-f", "-");
    PersistentVolume back = it.claims.bound(ns, "back");
    String backId = back.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    // Cinder's restore gave the volume the metadata of the one the backup was made of: the
    // provisioner wrote the new claim's identity back.
    assertThat(it.cinder.getVolume(backId).orElseThrow().metadata())
        .containsEntry("standalone-cinder.io/restored-from", backup.id())
        .containsEntry("standalone-cinder.io/pvc-uid", back.getSpec().getClaimRef().getUid())
        .containsEntry("kubernetes.io/created-for/pvc/name", "back");
    byte[] read = new byte[bytes.length];
    try (var in = java.nio.file.Files.newInputStream(labFile(it, backId))) {
      assertThat(in.readNBytes(read, 0, read.length)).isEqualTo(bytes.length);
    }
    assertThat(read).as("the volume's bytes, from the backup").isEqualTo(bytes);

    it.kubectl.ok(null, "delete", "volumesnapshot", "nightly", "-n", ns, "--timeout=90s");
    Waits.await(
        "the backup deleted in Cinder", () -> it.cinder.getBackup(backup.id()).isEmpty(), READY);
    ClaimLifecycleE2EIT.deleteAndAwaitTearDown(it, ns, "back", back, backId);
  }
}
