package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.provisioner.diagnostics.IscsiProbe;
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
    return LocalInstall.claimYaml(ns, name, className, annotations);
  }

  @Test
  void aClaimIsBoundByThePvControllerHoldsDataAndLeavesNothingWhenDeleted(LocalInstall it)
      throws Exception {
    it.kubectl.ok(CLASSES, "apply", "-f", "-");
    String ns = it.namespace("e2e-life");
    it.kubectl.ok(claim(ns, "data", "e2e-cinder", ""), "apply", "-f", "-");

    PersistentVolume pv = it.bound(ns, "data");
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
        .containsEntry(Names.ANN_STORAGE_PROVISIONER_BETA, "openstack.org/standalone-cinder");
    String volumeId = pv.getMetadata().getAnnotations().get(Names.ANN_VOLUME_ID);
    assertThat(it.cinder.getVolume(volumeId).orElseThrow().status()).isEqualTo("in-use");
    assertThat(it.cinder.getVolume(volumeId).orElseThrow().metadata())
        .containsEntry(Names.META_CLUSTER, it.clusterId)
        .containsEntry(Names.META_STATE, Names.STATE_PROVISIONED);

    // Events as the API server validates them (fabric8's mock takes any name).
    LocalInstall.await(
        "the provisioner's events",
        () ->
            it.admin.events().v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> "data".equals(e.getRegarding().getName()))
                .filter(e -> "openstack.org/standalone-cinder".equals(e.getReportingController()))
                .map(e -> e.getReason())
                .toList()
                .containsAll(List.of("Provisioning", "ProvisioningSucceeded")),
        Duration.ofSeconds(10));

    IscsiProbe.Target node = it.node(pv);
    IscsiProbe.Result rw = node.io("write -P 0x5a 0 1M", "read -P 0x5a 0 1M");
    assertThat(rw.ok()).as(rw.output()).isTrue();

    String secret = pv.getSpec().getIscsi().getSecretRef().getName();
    it.kubectl.ok(null, "delete", "pvc", "data", "-n", ns, "--timeout=60s");
    LocalInstall.await(
        "the released PV torn down",
        () -> it.admin.persistentVolumes().withName(pv.getMetadata().getName()).get() == null,
        Duration.ofSeconds(90));
    assertThat(it.cinder.getVolume(volumeId)).isEmpty();
    assertThat(it.admin.secrets().inNamespace(LocalInstall.NS).withName(secret).get()).isNull();
    assertThat(node.io("read 0 4k").ok()).as("the target refuses the login").isFalse();
  }
}
