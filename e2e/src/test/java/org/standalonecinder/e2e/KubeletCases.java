package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.standalonecinder.demo.LocalNode.quote;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.Pod;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
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
 * filesystem; the same Pod has a {@code volumeMode: Block} claim as a raw device (which the kubelet
 * holds open through a loop device); the Pod writes to both; when the Pod is deleted the kubelet
 * unmounts and logs out or unmaps; a second Pod reads what the first wrote, file and bytes, and for
 * iSCSI a Pod on a clone (through the webhook) reads it too, through the clone's own target and
 * CHAP Secret; when the claims are deleted nothing is left in Cinder, tgt or the node.
 */
abstract class KubeletCases {

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

  /**
   * A kind of PV as the node holds it: the kubelet plugin's name, what names the PV in the node's
   * mounts, sessions and mappings, and the device the plugin attaches.
   */
  record Kind(
      String classes,
      String className,
      String plugin,
      Function<PersistentVolume, String> key,
      Function<PersistentVolume, String> device,
      boolean clones) {}

  static final Kind ISCSI =
      new Kind(
          ClaimLifecycleE2EIT.CLASSES,
          "e2e-cinder",
          "iscsi",
          pv -> pv.getSpec().getIscsi().getIqn(),
          pv -> NodeIscsi.byPath(pv.getSpec().getIscsi()),
          true);

  static Stream<Arguments> kinds() {
    return Stream.of(
        Arguments.of(Named.of("iSCSI with CHAP", ISCSI)),
        Arguments.of(
            Named.of(
                "RBD, in-tree (1.20's form)",
                new Kind(
                    ClaimLifecycleE2EIT.CEPH_CLASSES,
                    "e2e-ceph",
                    "rbd",
                    pv -> pv.getSpec().getRbd().getImage(),
                    // udev's link for a mapped image
                    pv ->
                        "/dev/rbd/"
                            + pv.getSpec().getRbd().getPool()
                            + "/"
                            + pv.getSpec().getRbd().getImage(),
                    false))));
  }

  // The rows at once: each has its own namespace, claims and Pods, and mostly waits for the node.
  @Execution(ExecutionMode.CONCURRENT)
  @ParameterizedTest(name = "{0}")
  @MethodSource("kinds")
  void aPodsFilesAndRawBytesOutliveItAndTheKubeletLeavesNothingBehind(Kind kind, LocalInstall it)
      throws Exception {
    it.kubectl.ok(kind.classes(), "apply", "-f", "-");
    String ns = it.namespace("e2e-kubelet");
    it.kubectl.ok(Claims.yaml(ns, "data", kind.className(), ""), "apply", "-f", "-");
    it.kubectl.ok(Claims.blockYaml(ns, "raw", kind.className()), "apply", "-f", "-");
    PersistentVolume pv = it.claims.bound(ns, "data");
    PersistentVolume raw = it.claims.bound(ns, "raw");
    assertThat(raw.getSpec().getVolumeMode()).isEqualTo("Block");
    String word = "written-by-a-pod-in-" + ns;
    String bytes = "raw-bytes-of-a-pod-in-" + ns;

    Pod writer =
        start(
            it,
            ns,
            "writer",
            "echo "
                + word
                + " > /data/hello && printf %s "
                + bytes
                + " | dd of="
                + Pods.DEVICE
                + " conv=fsync 2>/dev/null && sync");
    NodeView used = awaitWritten(kind, pv, writer);
    NodeView device = view(kind, raw, null);
    assertThat(device.device() && device.attached() == 1)
        .as("the Block claim's device, attached for the Pod\n" + device)
        .isTrue();
    assertThat(used.device()).as("the device the kubelet attached\n" + used).isTrue();
    assertThat(used.attached()).as("its session or mapping\n" + used).isEqualTo(1);
    assertThat(used.podFsType())
        .as("the filesystem the kubelet made, mounted in the Pod's volume directory\n" + used)
        .isEqualTo("ext4");
    assertThat(used.file()).as("the file's bytes, as the node reads them").isEqualTo(word);

    it.pods.delete(ns, "writer", POD);
    NodeView after = awaitLetGo(kind, pv, writer);
    assertThat(after.device()).as("no device after the Pod\n" + after).isFalse();
    NodeView rawAfter = awaitLetGo(kind, raw, null);
    assertThat(rawAfter.device()).as("no Block device after the Pod\n" + rawAfter).isFalse();

    Pods.Ended read =
        run(
            it,
            ns,
            "reader",
            "data",
            true,
            "{ cat /data/hello; dd if="
                + Pods.DEVICE
                + " bs="
                + bytes.length()
                + " count=1 2>/dev/null; } > /dev/termination-log");
    assertThat(read.succeeded()).as(read.toString()).isTrue();
    assertThat(read.message())
        .as("the file, then the device's first bytes, as the next Pod reads them")
        .isEqualTo(word + "\n" + bytes);
    it.pods.delete(ns, "reader", POD);
    awaitLetGo(kind, pv, null);
    awaitLetGo(kind, raw, null);

    java.util.List<PersistentVolume> made = new java.util.ArrayList<>(java.util.List.of(pv, raw));
    if (kind.clones()) {
      // A clone (through the webhook's policy) of what the target holds: the kubelet has logged
      // out.
      it.kubectl.ok(
          Claims.yaml(ns, "copy", kind.className(), "k8s.io/CloneRequest: data"),
          "apply",
          "-f",
          "-");
      PersistentVolume copy = it.claims.bound(ns, "copy");
      made.add(0, copy);
      assertThat(kind.key().apply(copy)).isNotEqualTo(kind.key().apply(pv));
      assertThat(copy.getSpec().getIscsi().getSecretRef().getName())
          .as("the clone's own CHAP Secret")
          .isNotEqualTo(pv.getSpec().getIscsi().getSecretRef().getName());
      Pods.Ended cloned =
          run(it, ns, "clone-reader", "copy", false, "cat /data/hello > /dev/termination-log");
      assertThat(cloned.succeeded()).as(cloned.toString()).isTrue();
      assertThat(cloned.message()).as("the clone holds the Pod's file").isEqualTo(word);
      it.pods.delete(ns, "clone-reader", POD);
      awaitLetGo(kind, copy, null);
    }

    for (PersistentVolume each : made) {
      ClaimLifecycleE2EIT.deleteAndAwaitTearDown(
          it,
          ns,
          each.getSpec().getClaimRef().getName(),
          each,
          each.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID));
      if (each.getSpec().getIscsi() != null) {
        assertThat(tgtTargets()).doesNotContain(kind.key().apply(each));
      }
    }
  }

  /**
   * A ReadWriteMany Block claim (a multiattach type) used at once by a Pod on each node, each
   * through its node's kubelet: each Pod writes its own 4 KiB block and waits until it reads, past
   * any cache, the other's; so both held the device at the same time. Then neither node holds a
   * session of it.
   */
  @Test
  @Execution(ExecutionMode.CONCURRENT)
  // Not beside the attach CLI's rows on the second node: this Pod's kubelet discovers through the
  // portal the CLI's targets are on, and a discovery replaces the CLI's static node record of its
  // target (docs/attach.md, "A kubelet on the same node").
  @org.junit.jupiter.api.parallel.ResourceLock("node-local-2")
  void aReadWriteManyBlockClaimIsUsedByPodsOnTwoNodesAtOnce(LocalInstall it) throws Exception {
    LocalNode other = KernelNodeE2EIT.secondNode();
    assertThat(other.runsKubelet())
        .as("the second node runs no kubelet: dev/test.sh starts both with --kubelet")
        .isTrue();
    String ns = it.namespace("e2e-rwx");
    it.kubectl.ok(KernelNodeE2EIT.SHARED.formatted(ns), "apply", "-f", "-");
    PersistentVolume pv = it.claims.bound(ns, "shared");
    assertThat(pv.getSpec().getAccessModes()).containsExactly("ReadWriteMany");

    it.pods.namespaceReady(ns);
    it.kubectl.ok(
        Pods.blockYaml(ns, "a", "shared", node.name(), meetAt("from-pod-a", 0, "from-pod-b", 256)),
        "create",
        "-f",
        "-");
    it.kubectl.ok(
        Pods.blockYaml(ns, "b", "shared", other.name(), meetAt("from-pod-b", 256, "from-pod-a", 0)),
        "create",
        "-f",
        "-");
    Pods.Ended a = it.pods.ended(ns, "a", POD);
    Pods.Ended b = it.pods.ended(ns, "b", POD);
    assertThat(a.message())
        .as("what the Pod on " + node.name() + " read")
        .isEqualTo("saw from-pod-b");
    assertThat(b.message())
        .as("what the Pod on " + other.name() + " read")
        .isEqualTo("saw from-pod-a");
    assertThat(a.succeeded() && b.succeeded()).as(a + " " + b).isTrue();

    it.pods.delete(ns, "a", POD);
    it.pods.delete(ns, "b", POD);
    String iqn = pv.getSpec().getIscsi().getIqn();
    for (LocalNode n : List.of(node, other)) {
      Waits.await(
          "no session of " + iqn + " in " + n.name(),
          () ->
              n.run(
                      "iscsiadm -m session 2>/dev/null | grep -c " + quote(iqn) + " || true",
                      // the node's agent answers one script at a time, and every case here has one
                      Duration.ofSeconds(90))
                  .output()
                  .strip()
                  .equals("0"),
          LET_GO);
    }
    ClaimLifecycleE2EIT.deleteAndAwaitTearDown(
        it, ns, "shared", pv, pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID));
  }

  /**
   * A Pod's script: writes {@code mine} at 4 KiB block {@code at} of its device, then reads block
   * {@code peerAt} with direct I/O until it holds {@code peer} (150 s at most), and says what it
   * saw.
   */
  private static String meetAt(String mine, int at, String peer, int peerAt) {
    return String.join(
        "\n",
        "printf '%-4096s' "
            + mine
            + " | dd of="
            + Pods.DEVICE
            + " bs=4096 seek="
            + at
            + " oflag=direct 2>/dev/null || exit 1",
        "i=0; s=",
        "while [ $i -lt 150 ]; do",
        "  s=$(dd if="
            + Pods.DEVICE
            + " bs=4096 skip="
            + peerAt
            + " count=1 iflag=direct 2>/dev/null | tr -d ' \\000')",
        "  [ \"$s\" = " + peer + " ] && break",
        "  i=$((i + 1)); sleep 1",
        "done",
        "echo \"saw $s\" > /dev/termination-log",
        "[ \"$s\" = " + peer + " ]");
  }

  /**
   * Starts a Pod on the node with the claim {@code data} at /data and the Block claim {@code raw}
   * at {@link Pods#DEVICE} that runs {@code script} and then stays up (ending at once when
   * stopped), and waits until it runs.
   */
  private static Pod start(LocalInstall it, String ns, String pod, String script) {
    it.pods.namespaceReady(ns);
    String full = script + " && trap 'exit 0' TERM && while :; do sleep 1; done";
    it.kubectl.ok(
        Pods.withDevice(Pods.yaml(ns, pod, "data", node.name(), full), "raw"), "create", "-f", "-");
    return it.pods.running(ns, pod, POD);
  }

  /**
   * Runs a Pod on the node with {@code claim} at /data (and with {@code raw}, the Block claim
   * {@code raw} at {@link Pods#DEVICE}) to its end; it reports in its message.
   */
  private static Pods.Ended run(
      LocalInstall it, String ns, String pod, String claim, boolean raw, String script) {
    it.pods.namespaceReady(ns);
    String yaml = Pods.yaml(ns, pod, claim, node.name(), script);
    it.kubectl.ok(raw ? Pods.withDevice(yaml, "raw") : yaml, "create", "-f", "-");
    return it.pods.ended(ns, pod, POD);
  }

  /**
   * What the node holds of a PV: the filesystem mounted in the Pod's volume directory and the file
   * there, its mounts anywhere, its iSCSI sessions or RBD mappings, and whether its device exists.
   */
  record NodeView(String podFsType, String file, int mounts, int attached, boolean device) {
    boolean letGo() {
      return mounts == 0 && attached == 0;
    }
  }

  private static NodeView view(Kind kind, PersistentVolume pv, Pod pod) {
    String names = quote(pv.getMetadata().getName() + "|" + kind.key().apply(pv));
    String dir =
        pod == null
            ? "/nonexistent"
            : "/var/lib/kubelet/pods/"
                + pod.getMetadata().getUid()
                + "/volumes/kubernetes.io~"
                + kind.plugin()
                + "/"
                + pv.getMetadata().getName();
    LocalNode.Result r =
        node.run(
            String.join(
                "\n",
                "d=" + quote(dir),
                "echo POD_FSTYPE=$(awk -v d=\"$d\" '$2 == d {print $3}' /proc/mounts)",
                "[ -e \"$d/hello\" ] && echo FILE=$(cat \"$d/hello\")",
                "echo MOUNTS=$(grep -cE " + names + " /proc/mounts)",
                "s=$(iscsiadm -m session 2>/dev/null | grep -cE " + names + ")",
                "r=$(cat /sys/bus/rbd/devices/*/name 2>/dev/null | grep -cE " + names + ")",
                "echo ATTACHED=$((s + r))",
                "[ -e "
                    + quote(kind.device().apply(pv))
                    + " ] && echo DEVICE=yes || echo DEVICE=no"),
            Duration.ofSeconds(30));
    assertThat(r.ok()).as(r.output()).isTrue();
    return new NodeView(
        NodeIscsi.printed(r, "POD_FSTYPE"),
        NodeIscsi.printed(r, "FILE"),
        Integer.parseInt(NodeIscsi.printed(r, "MOUNTS")),
        Integer.parseInt(NodeIscsi.printed(r, "ATTACHED")),
        "yes".equals(NodeIscsi.printed(r, "DEVICE")));
  }

  /**
   * Waits until the kubelet has unmounted the PV and logged out of or unmapped its device, and
   * returns what the node holds then.
   */
  private static NodeView awaitLetGo(Kind kind, PersistentVolume pv, Pod pod) {
    return await(
        "the kubelet letting go of " + pv.getMetadata().getName() + " in the node",
        kind,
        pv,
        pod,
        NodeView::letGo);
  }

  /** Waits until the Pod's script has written its file, and returns what the node holds then. */
  private static NodeView awaitWritten(Kind kind, PersistentVolume pv, Pod pod) {
    return await(
        pod.getMetadata().getName() + "'s file in the node",
        kind,
        pv,
        pod,
        v -> v.file() != null && !v.file().isEmpty());
  }

  private static NodeView await(
      String what,
      Kind kind,
      PersistentVolume pv,
      Pod pod,
      java.util.function.Predicate<NodeView> done) {
    NodeView[] last = new NodeView[1];
    try {
      Waits.await(what, () -> done.test(last[0] = view(kind, pv, pod)), LET_GO);
    } catch (IllegalStateException e) {
      throw new IllegalStateException(e.getMessage() + "; the node held: " + last[0], e);
    }
    return last[0];
  }

  /** The targets the host's tgtd exports now. */
  static String tgtTargets() throws Exception {
    Process p =
        new ProcessBuilder("tgtadm", "--lld", "iscsi", "--mode", "target", "--op", "show")
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes());
    p.waitFor();
    return out;
  }
}
