package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.demo.Claims;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.Waits;
import org.standalonecinder.provisioner.diagnostics.IscsiProbe;
import org.standalonecinder.provisioner.mapping.IscsiMapper;
import org.standalonecinder.provisioner.provision.Names;

/**
 * A claim's life on a real control plane: {@code kubectl apply} of a class and a claim, the
 * provisioner (as its ServiceAccount) makes the Cinder volume and the PV, Kubernetes' own PV
 * controller binds them, a node (libiscsi in user space) writes and reads through the PV, and
 * {@code kubectl delete} of the claim (the PV controller releases the PV) leaves nothing.
 */
@ExtendWith(Installed.class)
@org.junit.jupiter.api.Order(1)
class ClaimLifecycleE2EIT {

  static final String CLASSES =
      """
      apiVersion: storage.k8s.io/v1
      kind: StorageClass
      metadata: {name: e2e-cinder}
      provisioner: openstack.org/standalone-cinder
      parameters: {fsType: ext4, smartclone: "true"}
      reclaimPolicy: Delete
      ---
      apiVersion: storage.k8s.io/v1
      kind: StorageClass
      metadata: {name: e2e-plain}
      provisioner: openstack.org/standalone-cinder
      reclaimPolicy: Delete
      """;

  static String claim(String ns, String name, String className, String annotations) {
    return Claims.yaml(ns, name, className, annotations);
  }

  @Test
  void aClaimIsBoundByThePvControllerHoldsDataAndLeavesNothingWhenDeleted(LocalInstall it)
      throws Exception {
    it.kubectl.ok(CLASSES, "apply", "-f", "-");
    String ns = it.namespace("e2e-life");
    // This claim's calls only: the audit log holds the whole run's (other tests read "cephx" too).
    java.time.Instant created = java.time.Instant.now();
    it.kubectl.ok(claim(ns, "data", "e2e-cinder", ""), "apply", "-f", "-");

    PersistentVolume pv = it.claims.bound(ns, "data");
    PersistentVolumeClaim claim =
        it.admin.persistentVolumeClaims().inNamespace(ns).withName("data").get();
    assertThat(pv.getMetadata().getName()).isEqualTo(Names.pvName(claim.getMetadata().getUid()));
    assertThat(pv.getSpec().getClaimRef().getUid()).isEqualTo(claim.getMetadata().getUid());
    assertThat(pv.getStatus().getPhase()).isEqualTo("Bound");
    // The real API server defaulted what the mock leaves empty, and set what the binder sets.
    assertThat(claim.getSpec().getVolumeMode()).isEqualTo("Filesystem");
    assertThat(claim.getMetadata().getFinalizers()).contains("kubernetes.io/pvc-protection");
    assertThat(claim.getMetadata().getAnnotations())
        .containsEntry("pv.kubernetes.io/bind-completed", "yes")
        .containsEntry(
            ClaimAnnotations.STORAGE_PROVISIONER_BETA, "openstack.org/standalone-cinder");
    String volumeId = pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    assertThat(it.cinder.getVolume(volumeId).orElseThrow().status()).isEqualTo("in-use");
    assertThat(it.cinder.getVolume(volumeId).orElseThrow().metadata())
        .containsEntry(Names.META_CLUSTER, it.clusterId);
    // Handed over by what follows the PV, which runs off the workers: by the time the claim is
    // bound, or moments after.
    Waits.await(
        "the volume handed over to its PV",
        () ->
            Names.STATE_PROVISIONED.equals(
                it.cinder.getVolume(volumeId).orElseThrow().metadata().get(Names.META_STATE)),
        java.time.Duration.ofSeconds(20));

    // Events as the API server validates them (fabric8's mock takes any name): one for the
    // outcome, and "Provisioning" before it only if the provisioning lasted (a slow Cinder: once
    // for what a look was doing, and once for each new word of how long Cinder has been making the
    // volume).
    java.util.function.Supplier<List<String>> events =
        () ->
            it.admin.events().v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> "data".equals(e.getRegarding().getName()))
                .filter(e -> "openstack.org/standalone-cinder".equals(e.getReportingController()))
                .map(e -> e.getReason())
                .toList();
    Waits.await(
        "the provisioner's events",
        () -> events.get().contains("ProvisioningSucceeded"),
        Duration.ofSeconds(10));
    long told = events.get().stream().filter("Provisioning"::equals).count();
    assertThat(events.get())
        .filteredOn(reason -> !reason.equals("Provisioning"))
        .containsExactly("ProvisioningSucceeded");

    // What the claim cost the API server, from its audit log: one call per thing made or told.
    String pvName = pv.getMetadata().getName();
    List<String> calls =
        AuditLog.calls(it).stream()
            .filter(c -> !c.at().isBefore(created))
            .filter(
                c ->
                    c.user()
                        .equals("system:serviceaccount:" + LocalInstall.NS + ":" + LocalInstall.NS))
            .filter(
                c ->
                    ns.equals(c.namespace())
                        || pvName.equals(c.name())
                        || IscsiMapper.secretName(pvName).equals(c.name())
                        || LocalInstall.CEPHX_SECRET.equals(c.name()))
            .filter(c -> !c.verb().equals("watch") && !c.verb().equals("list"))
            .map(c -> c.verb() + " " + c.resource())
            .toList();
    System.out.printf(
        "API calls of the provisioner for one claim: %d %s (Provisioning told: %s)%n",
        calls.size(), calls, told);
    List<String> expected =
        new java.util.ArrayList<>(
            List.of(
                "create secrets",
                "create persistentvolumes",
                "patch persistentvolumeclaims",
                "create events"));
    for (long i = 0; i < told; i++) {
      expected.add("create events");
    }
    assertThat(calls).containsExactlyInAnyOrderElementsOf(expected);

    IscsiProbe.Target node = it.claims.node(pv);
    IscsiProbe.Result rw = node.io("write -P 0x5a 0 1M", "read -P 0x5a 0 1M");
    assertThat(rw.ok()).as(rw.output()).isTrue();

    String secret = pv.getSpec().getIscsi().getSecretRef().getName();
    deleteAndAwaitTearDown(it, ns, "data", pv, volumeId);
    assertThat(it.admin.secrets().inNamespace(LocalInstall.NS).withName(secret).get()).isNull();
    assertThat(node.io("read 0 4k").ok()).as("the target refuses the login").isFalse();
  }

  static final String GROWING_CLASS =
      """
      apiVersion: storage.k8s.io/v1
      kind: StorageClass
      metadata: {name: e2e-growing}
      provisioner: openstack.org/standalone-cinder
      parameters: {fsType: ext4}
      reclaimPolicy: Delete
      allowVolumeExpansion: true
      """;

  /**
   * A claim grows from 1 Gi to 2 Gi on the real control plane: the API server lets it (the class
   * allows it) and refuses a shrink, Kubernetes' expand controller leaves it to an external
   * controller, and the installed provisioner (as its ServiceAccount) grows the attached Cinder
   * volume, the PV and the claim's status. The bytes written before are still there.
   */
  @Test
  void aClaimGrowsAndKeepsItsBytes(LocalInstall it) throws Exception {
    it.kubectl.ok(GROWING_CLASS, "apply", "-f", "-");
    String ns = it.namespace("e2e-grow");
    it.kubectl.ok(claim(ns, "data", "e2e-growing", ""), "apply", "-f", "-");
    PersistentVolume pv = it.claims.bound(ns, "data");
    String volumeId = pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    IscsiProbe.Target node = it.claims.node(pv);
    long oldEnd = 1L << 30;
    IscsiProbe.Result wrote = node.markEnds(oldEnd);
    assertThat(wrote.ok()).as(wrote.output()).isTrue();

    assertThat(request(it, ns, "data", "2Gi").ok()).isTrue();
    Waits.await(
        "the claim waiting for its filesystem",
        () -> {
          var c = it.admin.persistentVolumeClaims().inNamespace(ns).withName("data").get();
          return c.getStatus().getConditions() != null
              && c.getStatus().getConditions().stream()
                  .anyMatch(x -> "FileSystemResizePending".equals(x.getType()));
        },
        Duration.ofSeconds(90));

    assertThat(it.cinder.getVolume(volumeId).orElseThrow().sizeGib()).isEqualTo(2);
    assertThat(it.cinder.getVolume(volumeId).orElseThrow().status()).isEqualTo("in-use");
    assertThat(
            it.admin
                .persistentVolumes()
                .withName(pv.getMetadata().getName())
                .get()
                .getSpec()
                .getCapacity()
                .get("storage")
                .toString())
        .isEqualTo("2Gi");
    PersistentVolumeClaim claim =
        it.admin.persistentVolumeClaims().inNamespace(ns).withName("data").get();
    assertThat(claim.getStatus().getCapacity().get("storage").toString())
        .as("the filesystem is not grown yet")
        .isEqualTo("1Gi");
    Waits.await(
        "the events of the expansion",
        () -> {
          List<String> reasons =
              it.admin.events().v1().events().inNamespace(ns).list().getItems().stream()
                  .filter(e -> "data".equals(e.getRegarding().getName()))
                  .map(e -> e.getReason())
                  .toList();
          // Kubernetes' expand controller leaves iSCSI claims to an external controller.
          return reasons.containsAll(
              List.of("ExternalExpanding", "Resizing", "FileSystemResizeRequired"));
        },
        Duration.ofSeconds(10));

    IscsiProbe.Result after = node.grownKeepingEnds(oldEnd);
    assertThat(after.ok()).as(after.output()).isTrue();

    var shrink = request(it, ns, "data", "1Gi");
    assertThat(shrink.ok()).as("a shrink is refused by the API server").isFalse();
    assertThat(shrink.err()).contains("less than previous value");

    deleteAndAwaitTearDown(it, ns, "data", pv, volumeId);
  }

  /** {@code kubectl delete} of a claim, then its released PV and Cinder volume are gone. */
  static void deleteAndAwaitTearDown(
      LocalInstall it, String ns, String claim, PersistentVolume pv, String volumeId)
      throws Exception {
    it.kubectl.ok(null, "delete", "pvc", claim, "-n", ns, "--timeout=60s");
    Waits.await(
        "the released PV torn down",
        () -> it.admin.persistentVolumes().withName(pv.getMetadata().getName()).get() == null,
        Duration.ofSeconds(90));
    assertThat(it.cinder.getVolume(volumeId)).isEmpty();
  }

  /** {@code kubectl patch} of a claim's storage request, as a user grows (or shrinks) it. */
  static org.standalonecinder.demo.Kubectl.Result request(
      LocalInstall it, String ns, String claim, String size) {
    return it.kubectl.run(
        null,
        "patch",
        "pvc",
        claim,
        "-n",
        ns,
        "-p",
        "{\"spec\":{\"resources\":{\"requests\":{\"storage\":\"" + size + "\"}}}}");
  }

  static final String CEPH_CLASSES =
      """
      apiVersion: storage.k8s.io/v1
      kind: StorageClass
      metadata: {name: e2e-ceph}
      provisioner: openstack.org/standalone-cinder
      parameters: {type: lab-rbd, fsType: ext4}
      reclaimPolicy: Delete
      ---
      apiVersion: storage.k8s.io/v1
      kind: StorageClass
      metadata: {name: e2e-ceph-csi}
      provisioner: openstack.org/standalone-cinder
      parameters: {type: lab-rbd, rbdForm: csi, cephClusterID: lab-ceph}
      reclaimPolicy: Delete
      """;

  /**
   * RBD on the real API server: the in-tree form chosen from its version (1.20; no form is
   * configured anywhere) and the ceph-csi form a class asks for, both PVs accepted by its
   * validation and bound by its binder; the cephx Secrets in the provisioner's namespace only, and
   * gone with the PVs.
   */
  @Test
  void rbdClaimsOfBothFormsAreBoundAndLeaveNothing(LocalInstall it) throws Exception {
    it.kubectl.ok(CEPH_CLASSES, "apply", "-f", "-");
    String ns = it.namespace("e2e-ceph");
    it.kubectl.ok(
        claim(ns, "in-tree", "e2e-ceph", "") + "---\n" + claim(ns, "csi", "e2e-ceph-csi", ""),
        "apply",
        "-f",
        "-");
    PersistentVolume inTree = it.claims.bound(ns, "in-tree");
    PersistentVolume csi = it.claims.bound(ns, "csi");

    var rbd = inTree.getSpec().getRbd();
    assertThat(rbd).as("Kubernetes 1.20: the in-tree form").isNotNull();
    assertThat(rbd.getMonitors()).isNotEmpty();
    assertThat(rbd.getPool()).isEqualTo("volumes");
    String inTreeVolume = inTree.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    assertThat(rbd.getImage()).isEqualTo("volume-" + inTreeVolume);
    assertThat(rbd.getSecretRef().getNamespace()).isEqualTo(LocalInstall.NS);
    var source = csi.getSpec().getCsi();
    assertThat(source.getDriver()).isEqualTo("rbd.csi.ceph.com");
    assertThat(source.getVolumeAttributes()).containsEntry("clusterID", "lab-ceph");
    assertThat(source.getNodeStageSecretRef().getNamespace()).isEqualTo(LocalInstall.NS);
    String csiVolume = csi.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    List<String> shared =
        List.of(rbd.getSecretRef().getName(), source.getNodeStageSecretRef().getName());
    for (String name : shared) {
      assertThat(it.admin.secrets().inNamespace(LocalInstall.NS).withName(name).get())
          .as(name)
          .isNotNull();
    }
    assertThat(it.admin.secrets().inNamespace(ns).list().getItems())
        .as("nothing copied into the user's namespace")
        .allMatch(s -> "kubernetes.io/service-account-token".equals(s.getType()));

    it.kubectl.ok(null, "delete", "pvc", "in-tree", "csi", "-n", ns, "--timeout=60s");
    for (PersistentVolume pv : List.of(inTree, csi)) {
      Waits.await(
          "the released PV " + pv.getMetadata().getName() + " torn down",
          () -> it.admin.persistentVolumes().withName(pv.getMetadata().getName()).get() == null,
          Duration.ofSeconds(90));
    }
    assertThat(it.cinder.getVolume(inTreeVolume)).isEmpty();
    assertThat(it.cinder.getVolume(csiVolume)).isEmpty();
    for (String name : shared) {
      assertThat(it.admin.secrets().inNamespace(LocalInstall.NS).withName(name).get())
          .as(name + " goes with the last PV")
          .isNull();
    }
    assertThat(
            it.admin
                .secrets()
                .inNamespace(LocalInstall.NS)
                .withName(LocalInstall.CEPHX_SECRET)
                .get())
        .as("the admin's stays")
        .isNotNull();
  }
}
