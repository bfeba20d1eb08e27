package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.demo.Claims;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.Waits;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.Placement;

/**
 * Placement on the real control plane and the real Cinder, by the installed provisioner (its
 * ServiceAccount may read nodes): a {@code WaitForFirstConsumer} claim waits for the scheduler's
 * choice of node, its volume is made in that node's zone and its PV gets node affinity to the zone;
 * a zone Cinder does not know is a clear event; a selected node that is gone is taken off the claim
 * so the scheduler chooses again. The test plays kube-scheduler (kube-local runs none): it makes
 * the Node objects and writes {@code volume.kubernetes.io/selected-node} as the scheduler does.
 */
@ExtendWith(Installed.class)
@org.junit.jupiter.api.Order(2)
class TopologyE2EIT {

  private static final String ZONE = Placement.DEFAULT_ZONE_LABEL;
  private static final String CLASS =
      """
      apiVersion: storage.k8s.io/v1
      kind: StorageClass
      metadata: {name: e2e-topology}
      provisioner: openstack.org/standalone-cinder
      reclaimPolicy: Delete
      volumeBindingMode: WaitForFirstConsumer
      """;
  private static final List<String> NODES = List.of("e2e-node-nova", "e2e-node-mars");
  private static LocalInstall installed;

  @Test
  void aClaimIsMadeInTheZoneOfItsSelectedNodeAndItsPvIsForThatZone(LocalInstall it)
      throws Exception {
    installed = it;
    it.kubectl.ok(CLASS, "apply", "-f", "-");
    node(it, "e2e-node-nova", "nova"); // the local Cinder's one zone
    String ns = it.namespace("e2e-zone");
    it.kubectl.ok(Claims.yaml(ns, "data", "e2e-topology", ""), "apply", "-f", "-");

    // Not a pause: a claim of an Immediate class made after it is bound, so the provisioner is
    // alive and has looked at the first (its queue takes them in order) and let it wait.
    it.kubectl.ok(ClaimLifecycleE2EIT.CLASSES, "apply", "-f", "-");
    it.kubectl.ok(Claims.yaml(ns, "later", "e2e-plain", ""), "apply", "-f", "-");
    it.claims.bound(ns, "later");
    assertThat(claim(it, ns, "data").getStatus().getPhase())
        .as("waits for the scheduler's choice")
        .isEqualTo("Pending");
    assertThat(it.admin.persistentVolumes().withName(pvName(it, ns, "data")).get()).isNull();

    select(it, ns, "data", "e2e-node-nova");
    PersistentVolume pv = it.claims.bound(ns, "data");
    String volumeId = pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    assertThat(it.cinder.getVolume(volumeId).orElseThrow().availabilityZone()).isEqualTo("nova");
    List<NodeSelectorRequirement> affinity =
        pv.getSpec()
            .getNodeAffinity()
            .getRequired()
            .getNodeSelectorTerms()
            .get(0)
            .getMatchExpressions();
    assertThat(affinity)
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.getKey()).isEqualTo(ZONE);
              assertThat(r.getOperator()).isEqualTo("In");
              assertThat(r.getValues()).containsExactly("nova");
            });

    it.kubectl.ok(null, "delete", "pvc", "data", "-n", ns, "--timeout=60s");
    Waits.await(
        "the PV and the volume gone",
        () ->
            it.admin.persistentVolumes().withName(pv.getMetadata().getName()).get() == null
                && it.cinder.getVolume(volumeId).isEmpty(),
        Duration.ofSeconds(90));
  }

  @Test
  void aZoneCinderDoesNotKnowIsToldOnTheClaim(LocalInstall it) throws Exception {
    installed = it;
    it.kubectl.ok(CLASS, "apply", "-f", "-");
    node(it, "e2e-node-mars", "mars");
    String ns = it.namespace("e2e-zone");
    it.kubectl.ok(Claims.yaml(ns, "data", "e2e-topology", ""), "apply", "-f", "-");
    select(it, ns, "data", "e2e-node-mars");
    Waits.await(
        "the refusal",
        () ->
            failures(it, ns).stream()
                .anyMatch(
                    m ->
                        m.contains("Cinder has no availability zone mars")
                            && m.contains("selected node e2e-node-mars")),
        Duration.ofSeconds(60));
    assertThat(claim(it, ns, "data").getStatus().getPhase()).isEqualTo("Pending");
    it.kubectl.ok(null, "delete", "pvc", "data", "-n", ns, "--timeout=60s");
  }

  @Test
  void aSelectedNodeThatIsGoneIsTakenOffTheClaim(LocalInstall it) throws Exception {
    installed = it;
    it.kubectl.ok(CLASS, "apply", "-f", "-");
    String ns = it.namespace("e2e-zone");
    it.kubectl.ok(Claims.yaml(ns, "data", "e2e-topology", ""), "apply", "-f", "-");
    select(it, ns, "data", "e2e-node-gone");
    Waits.await(
        "the selected node taken off",
        () -> {
          Map<String, String> ann = claim(it, ns, "data").getMetadata().getAnnotations();
          return ann == null || !ann.containsKey(ClaimAnnotations.SELECTED_NODE);
        },
        Duration.ofSeconds(60));
    // The event follows the patch that takes the node off: wait for it rather than race it.
    Waits.await(
        "the event saying why",
        () ->
            failures(it, ns).stream()
                .anyMatch(m -> m.contains("the node e2e-node-gone the scheduler selected")),
        Duration.ofSeconds(30));
    it.kubectl.ok(null, "delete", "pvc", "data", "-n", ns, "--timeout=60s");
  }

  @AfterAll
  static void deleteTheNodes() {
    if (installed != null) {
      NODES.forEach(n -> installed.admin.nodes().withName(n).delete());
    }
  }

  private static void node(LocalInstall it, String name, String zone) {
    it.admin
        .nodes()
        .resource(
            new NodeBuilder()
                .withNewMetadata()
                .withName(name)
                .withLabels(Map.of(ZONE, zone))
                .endMetadata()
                .build())
        .createOr(n -> n.update());
  }

  /** What kube-scheduler writes on a claim once it has chosen the node of the claim's pod. */
  static void select(LocalInstall it, String ns, String claim, String node) {
    it.kubectl.ok(
        null,
        "annotate",
        "pvc",
        claim,
        "-n",
        ns,
        "--overwrite",
        ClaimAnnotations.SELECTED_NODE + "=" + node);
  }

  private static PersistentVolumeClaim claim(LocalInstall it, String ns, String name) {
    return it.admin.persistentVolumeClaims().inNamespace(ns).withName(name).get();
  }

  private static String pvName(LocalInstall it, String ns, String name) {
    return Names.pvName(claim(it, ns, name).getMetadata().getUid());
  }

  private static List<String> failures(LocalInstall it, String ns) {
    return it.admin.events().v1().events().inNamespace(ns).list().getItems().stream()
        .filter(e -> "ProvisioningFailed".equals(e.getReason()))
        .map(e -> e.getNote())
        .toList();
  }
}
