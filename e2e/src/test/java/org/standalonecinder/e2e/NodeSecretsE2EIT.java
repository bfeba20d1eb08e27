package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.demo.Claims;
import org.standalonecinder.demo.Kubectl;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.Waits;

/**
 * Who can read a claim's CHAP Secret, asked of the real API server's Node authorizer and RBAC
 * (dev/kube-local runs {@code Node,RBAC}) as each one would ask: a node's kubelet reads the Secrets
 * of the volumes of the Pods bound to it, so the provisioner keeps a claim's CHAP credentials in
 * its own namespace, named by the PV's {@code secretRef}, where only the node that runs a Pod of
 * the claim reaches them. Another node, a node that lists, the claim's own user: each is refused.
 * Every request is the real GET or list, made as that identity (the admin impersonates it, as
 * {@code kubectl --as} does).
 */
@ExtendWith(Installed.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Order(3)
class NodeSecretsE2EIT {

  /** The node the claim's Pod is bound to, and another one; no kubelet runs on either. */
  private static final String POD_NODE = "e2e-secrets-pod-node";

  private static final String OTHER_NODE = "e2e-secrets-other-node";

  private static final String TENANT = "e2e-secrets-tenant";

  private LocalInstall it;
  private String ns;
  private String secret;
  private String pv;

  @BeforeAll
  void aClaimWithChapAndAPodOfItOnOneNode(LocalInstall installation) throws Exception {
    it = installation;
    it.kubectl.ok(ClaimLifecycleE2EIT.CLASSES, "apply", "-f", "-");
    ns = it.namespace("e2e-secrets");
    // The claim's user may do what `edit` allows in the claim's namespace, as a tenant.
    it.kubectl.ok(
        null,
        "create",
        "rolebinding",
        "tenant-edit",
        "-n",
        ns,
        "--clusterrole=edit",
        "--user=" + TENANT);
    it.kubectl.ok(Claims.yaml(ns, "data", "e2e-plain", ""), "apply", "-f", "-");
    PersistentVolume bound = it.claims.bound(ns, "data");
    pv = bound.getMetadata().getName();
    assertThat(bound.getSpec().getIscsi().getChapAuthSession()).isTrue();
    var ref = bound.getSpec().getIscsi().getSecretRef();
    assertThat(ref.getNamespace()).isEqualTo(LocalInstall.NS);
    secret = ref.getName();
    for (String node : List.of(POD_NODE, OTHER_NODE)) {
      // Nodes without a kubelet: tainted, so that no other test's Pod is scheduled there.
      it.admin
          .nodes()
          .resource(
              new NodeBuilder()
                  .withNewMetadata()
                  .withName(node)
                  .endMetadata()
                  .withNewSpec()
                  .addNewTaint()
                  .withKey("standalone-cinder.io/no-kubelet")
                  .withEffect("NoSchedule")
                  .endTaint()
                  .endSpec()
                  .build())
          .createOr(n -> n.update());
    }
    assertThat(as(node(POD_NODE), "get", "secret", secret, "-n", LocalInstall.NS).ok())
        .as("no Pod of the claim on the node yet: its Secret is out of the node's reach")
        .isFalse();
    it.pods.namespaceReady(ns);
    // Bound by name, as the scheduler binds a Pod; it never runs (no kubelet), which does not
    // matter to the authorizer: the graph is Pod → node, Pod → claim → PV → Secret.
    it.kubectl.ok(
        """
        apiVersion: v1
        kind: Pod
        metadata: {name: user, namespace: %s}
        spec:
          nodeName: %s
          automountServiceAccountToken: false
          containers:
          - {name: main, image: standalone-cinder.local/busybox:1, imagePullPolicy: Never,
             volumeMounts: [{name: data, mountPath: /data}]}
          volumes:
          - {name: data, persistentVolumeClaim: {claimName: data}}
        """
            .formatted(ns, POD_NODE),
        "apply",
        "-f",
        "-");
    // The authorizer's graph follows the API by watches: a moment.
    Waits.await(
        "the Pod's node may read the claim's CHAP Secret",
        () -> as(node(POD_NODE), "get", "secret", secret, "-n", LocalInstall.NS).ok(),
        Duration.ofSeconds(20));
  }

  @AfterAll
  void removeThePodTheClaimAndTheNodes() {
    if (it == null) {
      return;
    }
    it.kubectl.run(null, "delete", "pod", "user", "-n", ns, "--grace-period=0", "--force");
    it.kubectl.run(null, "delete", "pvc", "data", "-n", ns, "--timeout=60s");
    for (String node : List.of(POD_NODE, OTHER_NODE)) {
      it.admin.nodes().withName(node).delete();
    }
  }

  @ParameterizedTest(name = "{0}")
  @Order(1)
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          the Pod's node reads the claim's CHAP Secret       | pod-node   | get secret     | allowed
          the Pod's node reads the claim's PV                | pod-node   | get pv         | allowed
          another node cannot read the CHAP Secret           | other-node | get secret     | refused
          another node cannot read the claim's PV            | other-node | get pv         | refused
          another node cannot list the provisioner's Secrets | other-node | list secrets   | refused
          the Pod's node cannot list them either             | pod-node   | list secrets   | refused
          the claim's user cannot read the CHAP Secret       | tenant     | get secret     | refused
          the claim's user cannot list the provisioner's Secrets | tenant | list secrets   | refused
          the claim's user cannot read the PV                | tenant     | get pv         | refused
          """)
  void whoReachesTheChapSecret(String name, String who, String request, String outcome) {
    List<String> identity =
        switch (who) {
          case "pod-node" -> node(POD_NODE);
          case "other-node" -> node(OTHER_NODE);
          case "tenant" -> List.of("--as=" + TENANT);
          default -> throw new IllegalArgumentException(who);
        };
    List<String> args =
        switch (request) {
          case "get secret" -> List.of("get", "secret", secret, "-n", LocalInstall.NS);
          case "list secrets" -> List.of("get", "secrets", "-n", LocalInstall.NS);
          case "get pv" -> List.of("get", "pv", pv);
          default -> throw new IllegalArgumentException(request);
        };
    Kubectl.Result r = as(identity, args.toArray(String[]::new));
    if (outcome.equals("allowed")) {
      assertThat(r.ok()).as(name + ": " + r).isTrue();
    } else {
      assertThat(r.ok()).as(name + ": " + r).isFalse();
      assertThat(r.err()).as(name).containsIgnoringCase("forbidden");
    }
  }

  @Test
  @Order(2)
  void theNodeLosesTheSecretWhenThePodIsGone() {
    it.kubectl.ok(null, "delete", "pod", "user", "-n", ns, "--grace-period=0", "--force");
    Waits.await(
        "the Pod's node refused the Secret once its Pod is gone",
        () -> !as(node(POD_NODE), "get", "secret", secret, "-n", LocalInstall.NS).ok(),
        Duration.ofSeconds(20));
    Kubectl.Result r = as(node(POD_NODE), "get", "secret", secret, "-n", LocalInstall.NS);
    assertThat(r.err()).containsIgnoringCase("forbidden");
  }

  /** A kubelet's identity, as the Node authorizer knows nodes. */
  private static List<String> node(String name) {
    return List.of("--as=system:node:" + name, "--as-group=system:nodes");
  }

  private Kubectl.Result as(List<String> identity, String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.addAll(identity);
    all.add("-o=name");
    return it.kubectl.run(null, all.toArray(String[]::new));
  }
}
