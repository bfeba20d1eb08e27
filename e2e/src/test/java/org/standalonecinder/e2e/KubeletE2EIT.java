package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.standalonecinder.demo.LocalNode.quote;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import java.time.Duration;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.demo.Claims;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.LocalNode;
import org.standalonecinder.demo.Pods;
import org.standalonecinder.demo.Waits;

/**
 * The seeds' "use storage", row by row, on a real kubelet (Kubernetes 1.20's, built by
 * dev/kube-local) in a real kernel (dev/node-local --kubelet): a claim the provisioner fulfilled is
 * mounted into a Pod by the kubelet's own volume plugin (iSCSI with the PV's CHAP Secret, read by
 * the node through the Node authorizer; RBD in-tree with the cephx Secret), which makes the
 * filesystem; the Pod writes; when the Pod is deleted the kubelet unmounts and logs out or unmaps;
 * a second Pod reads what the first wrote; when the claim is deleted nothing is left in Cinder, tgt
 * or the node.
 */
@ExtendWith(Installed.class)
// Before the fault suites, which may leave the installed provisioner stopped.
@org.junit.jupiter.api.Order(2)
class KubeletE2EIT {

  static final Duration POD = Duration.ofSeconds(240);
  static final Duration LET_GO = Duration.ofSeconds(120);
  static LocalNode node;

  @BeforeAll
  static void theNodeRunsAKubelet() throws Exception {
    node = KernelNodeE2EIT.theNode();
    assertThat(node.runsKubelet())
        .as(
            "the node runs no kubelet: dev/node-local/start.sh --kubelet starts one (dev/test.sh"
                + " does)")
        .isTrue();
  }

  /** A kind of PV as the node holds it: what names it in the node's mounts and devices. */
  record Kind(String classes, String className, Function<PersistentVolume, String> key) {}

  static Stream<Arguments> kinds() {
    return Stream.of(
        Arguments.of(
            Named.of(
                "iSCSI with CHAP",
                new Kind(
                    ClaimLifecycleE2EIT.CLASSES,
                    "e2e-cinder",
                    pv -> pv.getSpec().getIscsi().getIqn()))),
        Arguments.of(
            Named.of(
                "RBD, in-tree (1.20's form)",
                new Kind(
                    ClaimLifecycleE2EIT.CEPH_CLASSES,
                    "e2e-ceph",
                    pv -> pv.getSpec().getRbd().getImage()))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("kinds")
  void aPodsFilesOutliveItAndTheKubeletLeavesNothingBehind(Kind kind, LocalInstall it)
      throws Exception {
    it.kubectl.ok(kind.classes(), "apply", "-f", "-");
    String ns = it.namespace("e2e-kubelet");
    it.kubectl.ok(Claims.yaml(ns, "data", kind.className(), ""), "apply", "-f", "-");
    PersistentVolume pv = it.claims.bound(ns, "data");
    String key = kind.key().apply(pv);
    String word = "written-by-a-pod-in-" + ns;

    Pods.Ended wrote = run(it, ns, "writer", "data", "echo " + word + " > /data/hello && sync");
    assertThat(wrote.succeeded()).as(wrote.toString()).isTrue();
    assertThat(wrote.message()).as("the filesystem the kubelet made").isEqualTo("ext4");
    assertThat(held(pv, key)).as("mounted and attached while the Pod exists").isGreaterThan(0);

    it.pods.delete(ns, "writer", POD);
    awaitLetGo(pv, key);

    Pods.Ended read = run(it, ns, "reader", "data", "cat /data/hello > /dev/termination-log");
    assertThat(read.succeeded()).as(read.toString()).isTrue();
    assertThat(read.message()).isEqualTo(word);
    it.pods.delete(ns, "reader", POD);
    awaitLetGo(pv, key);

    ClaimLifecycleE2EIT.deleteAndAwaitTearDown(
        it, ns, "data", pv, pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID));
    if (pv.getSpec().getIscsi() != null) {
      assertThat(tgtTargets()).doesNotContain(key);
    }
  }

  /**
   * A clone claim (through the webhook's policy) mounted into a Pod holds the files a Pod wrote to
   * its source; the clone's own target and CHAP secret, and the source untouched by its reader.
   */
  @Test
  void aPodOnACloneReadsWhatAPodWroteToTheSource(LocalInstall it) throws Exception {
    it.kubectl.ok(ClaimLifecycleE2EIT.CLASSES, "apply", "-f", "-");
    String ns = it.namespace("e2e-kubelet-clone");
    it.kubectl.ok(Claims.yaml(ns, "src", "e2e-cinder", ""), "apply", "-f", "-");
    PersistentVolume src = it.claims.bound(ns, "src");
    Pods.Ended wrote =
        run(it, ns, "writer", "src", "echo 'the source, before the clone' > /data/hello && sync");
    assertThat(wrote.succeeded()).as(wrote.toString()).isTrue();
    // The kubelet has logged out before Cinder copies: what the target holds is what was written.
    it.pods.delete(ns, "writer", POD);
    awaitLetGo(src, src.getSpec().getIscsi().getIqn());

    it.kubectl.ok(
        Claims.yaml(ns, "copy", "e2e-cinder", "k8s.io/CloneRequest: src"), "apply", "-f", "-");
    PersistentVolume copy = it.claims.bound(ns, "copy");
    assertThat(copy.getSpec().getIscsi().getIqn()).isNotEqualTo(src.getSpec().getIscsi().getIqn());
    assertThat(copy.getSpec().getIscsi().getSecretRef().getName())
        .isNotEqualTo(src.getSpec().getIscsi().getSecretRef().getName());
    Pods.Ended read = run(it, ns, "reader", "copy", "cat /data/hello > /dev/termination-log");
    assertThat(read.succeeded()).as(read.toString()).isTrue();
    assertThat(read.message()).isEqualTo("the source, before the clone");
    it.pods.delete(ns, "reader", POD);
    awaitLetGo(copy, copy.getSpec().getIscsi().getIqn());

    for (PersistentVolume pv : java.util.List.of(copy, src)) {
      ClaimLifecycleE2EIT.deleteAndAwaitTearDown(
          it,
          ns,
          pv.getSpec().getClaimRef().getName(),
          pv,
          pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID));
    }
  }

  /**
   * Runs a Pod on the node with the claim at /data; the script's output goes to the termination
   * message, and without one the message is the filesystem type the Pod saw at /data.
   */
  private static Pods.Ended run(
      LocalInstall it, String ns, String pod, String claim, String script) {
    it.pods.namespaceReady(ns);
    String full =
        script
            + " && { [ -s /dev/termination-log ] || awk '$2 == \"/data\" {print $3}' /proc/mounts"
            + " > /dev/termination-log; }";
    it.kubectl.ok(Pods.yaml(ns, pod, claim, node.name(), full), "create", "-f", "-");
    return it.pods.ended(ns, pod, POD);
  }

  /** How many of the node's mounts, iSCSI sessions and RBD mappings name this PV. */
  private static int held(PersistentVolume pv, String key) {
    String names = quote(pv.getMetadata().getName() + "|" + key);
    LocalNode.Result r =
        node.run(
            String.join(
                "\n",
                "m=$(grep -cE " + names + " /proc/mounts)",
                "s=$(iscsiadm -m session 2>/dev/null | grep -cE " + names + ")",
                "r=$(cat /sys/bus/rbd/devices/*/name 2>/dev/null | grep -cE " + names + ")",
                "echo HELD=$((m + s + r)) mounts=$m sessions=$s mapped=$r"),
            Duration.ofSeconds(30));
    assertThat(r.ok()).as(r.output()).isTrue();
    return Integer.parseInt(NodeIscsi.printed(r, "HELD").split(" ")[0]);
  }

  /** Waits until the kubelet has unmounted the PV and logged out of or unmapped its device. */
  private static void awaitLetGo(PersistentVolume pv, String key) {
    Waits.await(
        "the kubelet letting go of " + pv.getMetadata().getName() + " in the node",
        () -> held(pv, key) == 0,
        LET_GO);
  }

  /** The targets the host's tgtd exports now. */
  private static String tgtTargets() throws Exception {
    Process p =
        new ProcessBuilder("tgtadm", "--lld", "iscsi", "--mode", "target", "--op", "show")
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes());
    p.waitFor();
    return out;
  }
}
