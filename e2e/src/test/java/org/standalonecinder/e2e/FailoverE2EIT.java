package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.demo.Claims;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.Waits;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.provision.Names;

/**
 * Two provisioner replicas on the real API server, electing a leader on a Lease: the leader is
 * killed (SIGKILL: no clean-up, no release) in the middle of a burst of claims; the standby takes
 * over within the lease duration and every claim is provisioned exactly once.
 */
@ExtendWith(Installed.class)
@Order(5)
class FailoverE2EIT {

  static final int CLAIMS = 16;
  static final String LEASE = "standalone-cinder-provisioner";

  static final String CLASS =
      """
      apiVersion: storage.k8s.io/v1
      kind: StorageClass
      metadata: {name: e2e-failover}
      provisioner: openstack.org/standalone-cinder
      reclaimPolicy: Delete
      """;

  private static String holder(LocalInstall it) {
    Lease l = it.admin.resources(Lease.class).inNamespace(LocalInstall.NS).withName(LEASE).get();
    return l == null || l.getSpec() == null ? null : l.getSpec().getHolderIdentity();
  }

  @Test
  void theStandbyTakesOverFromAKilledLeaderAndEveryClaimIsProvisionedOnce(LocalInstall it)
      throws Exception {
    Waits.await(
        "the first replica leads", () -> "provisioner".equals(holder(it)), Duration.ofSeconds(30));
    it.startProvisionerReplica("provisioner-b");
    it.kubectl.ok(CLASS, "apply", "-f", "-");
    String ns = it.namespace("e2e-failover");
    StringBuilder burst = new StringBuilder();
    for (int i = 0; i < CLAIMS; i++) {
      burst.append(Claims.yaml(ns, "c" + i, "e2e-failover", "")).append("---\n");
    }
    it.kubectl.ok(burst.toString(), "apply", "-f", "-");

    // Mid-burst: some claims have their PV, most do not yet.
    Waits.await(
        "the first PVs",
        () ->
            it.admin.persistentVolumes().list().getItems().stream()
                    .filter(pv -> pv.getSpec().getClaimRef() != null)
                    .filter(pv -> ns.equals(pv.getSpec().getClaimRef().getNamespace()))
                    .count()
                >= 2,
        Duration.ofSeconds(60));
    it.processes.kill("provisioner");
    long killed = System.nanoTime();
    Waits.await(
        "the standby leads", () -> "provisioner-b".equals(holder(it)), Duration.ofSeconds(30));
    Duration takeover = Duration.ofNanos(System.nanoTime() - killed);
    System.out.printf(
        "failover: the standby led %d ms after the leader was killed (lease %d s)%n",
        takeover.toMillis(), LocalInstall.LEASE_SECONDS);
    // The Lease lapses LEASE_SECONDS after the last renewal (at most one retry period before the
    // kill), and the standby tries every retry period with fabric8's jitter (up to 1.2 s here):
    // 6 + 1 + 2.2 s at worst, plus the API calls.
    assertThat(takeover).isLessThanOrEqualTo(Duration.ofSeconds(LocalInstall.LEASE_SECONDS + 4));

    Map<String, String> volumeOfClaim = new HashMap<>();
    List<PersistentVolume> pvs = new ArrayList<>();
    for (int i = 0; i < CLAIMS; i++) {
      PersistentVolume pv = it.claims.bound(ns, "c" + i);
      pvs.add(pv);
      volumeOfClaim.put("c" + i, pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID));
    }
    // Exactly once: every Cinder volume made for these claims belongs to exactly one PV.
    List<Volume> made =
        it.cinder.findVolumes(
            null, Map.of(Names.META_CLUSTER, it.clusterId, Names.META_PVC_NAMESPACE, ns));
    assertThat(made).hasSize(CLAIMS);
    assertThat(made.stream().map(Volume::id).toList())
        .containsExactlyInAnyOrderElementsOf(volumeOfClaim.values());
    // Handed to their PVs, also the one whose PV the killed leader made but did not hand over:
    // the new leader's sweep finds it still "provisioning" with its PV, and completes it.
    Waits.await(
        "every volume handed to its PV",
        () ->
            it
                .cinder
                .findVolumes(
                    null, Map.of(Names.META_CLUSTER, it.clusterId, Names.META_PVC_NAMESPACE, ns))
                .stream()
                .allMatch(v -> Names.STATE_PROVISIONED.equals(v.metadata().get(Names.META_STATE))),
        Duration.ofSeconds(20));

    // Clean up with the new leader; the killed replica comes back as a standby.
    it.kubectl.ok(null, "delete", "namespace", ns, "--timeout=120s");
    for (PersistentVolume pv : pvs) {
      Waits.await(
          "the released PV " + pv.getMetadata().getName() + " torn down",
          () -> it.admin.persistentVolumes().withName(pv.getMetadata().getName()).get() == null,
          Duration.ofSeconds(120));
    }
    assertThat(
            it.cinder.findVolumes(
                null, Map.of(Names.META_CLUSTER, it.clusterId, Names.META_PVC_NAMESPACE, ns)))
        .isEmpty();
    it.processes.restart("provisioner");
    it.processes.stop("provisioner-b");
    Waits.await(
        "the restarted replica leads once the other released the Lease",
        () -> "provisioner".equals(holder(it)),
        Duration.ofSeconds(30));
  }
}
