package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.time.Duration;
import java.util.Map;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.Waits;
import org.standalonecinder.provisioner.cinder.Snapshot;

/** The snapshot API's objects as the e2e tests write and read them, and a Pod that reads a file. */
final class SnapshotObjects {

  private SnapshotObjects() {}

  /**
   * A backup copies the whole volume through cinder-backup: four at once beside the nodes' Pods on
   * two cores took 80 s for the copy alone, and the snapshot-controller stand-in's status comes
   * after it.
   */
  static final Duration READY = Duration.ofSeconds(180);

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

  static final ResourceDefinitionContext CLASSES =
      new ResourceDefinitionContext.Builder()
          .withGroup("snapshot.storage.k8s.io")
          .withVersion("v1")
          .withKind("VolumeSnapshotClass")
          .withPlural("volumesnapshotclasses")
          .withNamespaced(false)
          .build();

  /** A class of Cinder snapshots, or of Cinder backups, of the provisioner {@code driver}. */
  static String snapshotClass(String name, String driver, boolean backups) {
    return """
        apiVersion: snapshot.storage.k8s.io/v1
        kind: VolumeSnapshotClass
        metadata: {name: %s}
        driver: %s
        deletionPolicy: Delete
        parameters: {type: %s}
        """
        .formatted(name, driver, backups ? "backup" : "snapshot");
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

  /** Waits until the snapshot-controller stand-in says the snapshot is ready; its status then. */
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

  /** What a Pod on the node reads from {@code /data/hello} of the claim; the Pod is gone after. */
  static String readHello(
      LocalInstall it, org.standalonecinder.demo.LocalNode node, String ns, String claim) {
    String pod = "read-" + claim;
    it.kubectl.ok(
        org.standalonecinder.demo.Pods.yaml(
            ns, pod, claim, node.name(), "cat /data/hello > /dev/termination-log"),
        "create",
        "-f",
        "-");
    org.standalonecinder.demo.Pods.Ended read = it.pods.ended(ns, pod, KubeletCases.POD);
    assertThat(read.succeeded()).as(read.toString()).isTrue();
    it.pods.delete(ns, pod, KubeletCases.POD);
    return read.message();
  }
}
