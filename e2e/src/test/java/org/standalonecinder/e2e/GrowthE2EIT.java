package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.standalonecinder.demo.LocalNode.quote;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.demo.Claims;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.LocalNode;
import org.standalonecinder.demo.Pods;
import org.standalonecinder.demo.Waits;

/**
 * A running Pod's filesystem grows with its claim, on the real kubelet and kernel: the claim grows
 * from 1 to 3 GiB while a Pod writes to it; the installed provisioner grows the Cinder volume and
 * the PV and marks the claim {@code FileSystemResizePending}; the node component ({@code
 * grow-filesystems --every}, run as root in the node with the kubelet's own credentials) rescans
 * the iSCSI device, grows the mounted filesystem and finishes the claim. The Pod, never restarted,
 * sees 3 GiB in its {@code df} and its file intact.
 */
@ExtendWith(Installed.class)
// Not beside NodesE2EIT: beside its cases the node component's passes and these Pods held the
// first node's answers to them up past their timeouts. Next to it in the order: the node loss
// starts once both have ended, and then runs beside the classes that use no node.
@Order(2)
class GrowthE2EIT {

  /**
   * The classes the rows grow in: ext4 and xfs on iSCSI (the default type), and RBD; and an RBD
   * class that does not allow expansion, until the RBD row's admin allows it.
   */
  static final String CLASSES =
      String.join(
          "---\n",
          growing("e2e-growing-ext4", "fsType: ext4"),
          growing("e2e-growing-xfs", "fsType: xfs"),
          growing("e2e-growing-rbd", "type: lab-rbd, fsType: ext4"),
          growing("e2e-rbd-fixed", "type: lab-rbd, fsType: ext4")
              .replace("allowVolumeExpansion: true\n", "allowVolumeExpansion: false\n"));

  private static String growing(String name, String parameters) {
    return """
        apiVersion: storage.k8s.io/v1
        kind: StorageClass
        metadata: {name: %s}
        provisioner: openstack.org/standalone-cinder
        parameters: {%s}
        reclaimPolicy: Delete
        allowVolumeExpansion: true
        """
        .formatted(name, parameters);
  }

  /** The node's own credentials, as dev/node-local gives them to its kubelet. */
  private static final String NODE_CREDENTIALS = "/node/kubelet/kubelet.kubeconfig";

  /** Where the node component's output goes, in the node. */
  private static final String LOG = "/run/grow-filesystems.log";

  static LocalNode node;

  /**
   * The node component as its DaemonSet runs it: a pass every 10 s (30 s in the DaemonSet), as
   * root, with the node's credentials.
   */
  @BeforeAll
  static void theNodeRunsTheNodeComponent(LocalInstall it) throws Exception {
    node = KernelNodeE2EIT.theNode();
    assertThat(node.runsKubelet()).as("dev/node-local/start.sh --kubelet starts one").isTrue();
    it.kubectl.ok(CLASSES, "apply", "-f", "-");
    String jar =
        node.copyIn(it.root.resolve("provisioner/target/standalone-cinder-provisioner.jar"));
    LocalNode.Result started =
        node.run(
            "setsid java -Xmx64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -jar "
                + jar
                + " grow-filesystems --every PT10S --kubeconfig "
                + NODE_CREDENTIALS
                + " </dev/null >"
                + LOG
                + " 2>&1 & echo $! > /run/grow-filesystems.pid",
            Duration.ofSeconds(30));
    assertThat(started.ok()).as(started.output()).isTrue();
  }

  @AfterAll
  static void stopIt() {
    node.run("kill $(cat /run/grow-filesystems.pid) 2>/dev/null; true", Duration.ofSeconds(30));
  }

  /**
   * An iSCSI filesystem grown by the node component (the kubelet's iscsi plugin cannot). In-tree
   * rbd claims are not grown: Kubernetes' own expand controller takes them too and crashed the
   * controller-manager here (docs/provisioner.md, expansion).
   */
  @Execution(ExecutionMode.CONCURRENT)
  @ParameterizedTest(name = "{0} on iSCSI")
  @ValueSource(strings = {"ext4", "xfs"})
  void aRunningPodsFilesystemGrowsWithItsClaim(String fsType, LocalInstall it) throws Exception {
    String ns = it.namespace("e2e-growfs-" + fsType);
    it.kubectl.ok(Claims.yaml(ns, "data", "e2e-growing-" + fsType, ""), "apply", "-f", "-");
    PersistentVolume pv = it.claims.bound(ns, "data");
    String word = "kept-through-the-growth-in-" + ns;
    it.pods.namespaceReady(ns);
    // The Pod says what its df sees, every second, until told to stop; then once more, and ends.
    String df = "df -k /data | tail -n 1 | awk '{print $2}'";
    it.kubectl.ok(
        Pods.yaml(
            ns,
            "writer",
            "data",
            node.name(),
            String.join(
                "\n",
                "echo " + word + " > /data/hello && sync || exit 1",
                "while [ ! -e /data/stop ]; do "
                    + df
                    + " > /data/.df && mv /data/.df /data/df;"
                    + " sleep 1; done",
                "{ " + df + "; cat /data/hello; } > /dev/termination-log")),
        "create",
        "-f",
        "-");
    Pod pod = it.pods.running(ns, "writer", KubeletCases.POD);
    String dir =
        "/var/lib/kubelet/pods/"
            + pod.getMetadata().getUid()
            + "/volumes/kubernetes.io~iscsi/"
            + pv.getMetadata().getName();
    long before = awaitDf(dir, kib -> kib > 0);
    assertThat(before).as("the Pod's df before, KiB").isLessThan(1L << 20);

    assertThat(ClaimLifecycleE2EIT.request(it, ns, "data", "3Gi").ok()).isTrue();
    try {
      Waits.await(
          "the claim grown to 3Gi and finished by the node",
          () -> {
            PersistentVolumeClaim c = claim(it, ns);
            return new Quantity("3Gi").equals(c.getStatus().getCapacity().get("storage"))
                && !waits(c);
          },
          Duration.ofSeconds(180));
    } catch (IllegalStateException e) {
      throw new IllegalStateException(
          e.getMessage() + "; the node component said:\n" + nodeComponentLog(), e);
    }
    assertThat(nodeComponentLog())
        .contains(pv.getMetadata().getName() + " (/dev/sd", fsType + ", mounted for 1 Pod): grown:")
        .contains(ns + "/data: grown to 3Gi");
    long after = awaitDf(dir, kib -> kib > 2L << 20);
    assertThat(after)
        .as("the Pod's df after, KiB (3 GiB less the filesystem's own)")
        .isBetween(2_900_000L, 3L << 20);

    // What the node's credentials cannot do, though it can finish this claim: another node may
    // not touch it (the Node authorizer), and this node may write nothing but its capacity and
    // conditions (NodeRestriction).
    String patch = "{\"status\":{\"capacity\":{\"storage\":\"100Gi\"}}}";
    assertThat(patchStatusAs(KernelNodeE2EIT.secondNode(), ns, patch))
        .as("the second node, whose Pods do not use the claim, growing its status")
        .isEqualTo(403);
    assertThat(patchStatusAs(node, ns, "{\"status\":{\"conditions\":[]}}"))
        .as("the claim's own node writing its conditions (what it may do: the request works)")
        .isEqualTo(200);
    assertThat(patchStatusAs(node, ns, "{\"status\":{\"phase\":\"Lost\"}}"))
        .as("the claim's own node marking it Lost")
        .isEqualTo(403);
    assertThat(claim(it, ns).getStatus().getCapacity().get("storage"))
        .isEqualTo(new Quantity("3Gi"));

    LocalNode.Result stop = node.run("touch " + quote(dir + "/stop"), Duration.ofSeconds(30));
    assertThat(stop.ok()).as(stop.output()).isTrue();
    Pods.Ended ended = it.pods.ended(ns, "writer", KubeletCases.POD);
    assertThat(ended.succeeded()).as(ended.toString()).isTrue();
    assertThat(ended.message()).isEqualTo(after + "\n" + word);
    assertThat(it.pods.story(ns, "writer"))
        .as("the same Pod throughout: never restarted")
        .doesNotContain("Killing");
    // The node component says so on the claim, as the kubelet would.
    List<String> grownBy =
        it.admin.v1().events().inNamespace(ns).list().getItems().stream()
            .filter(e -> e.getReason().equals("FileSystemResizeSuccessful"))
            .map(
                e ->
                    (e.getSource() == null || e.getSource().getComponent() == null
                            ? e.getReportingComponent()
                            : e.getSource().getComponent())
                        + " on "
                        + e.getInvolvedObject().getKind())
            .toList();
    assertThat(grownBy).contains("standalone-cinder-node on PersistentVolumeClaim");

    it.pods.delete(ns, "writer", KubeletCases.POD);
    ClaimLifecycleE2EIT.deleteAndAwaitTearDown(
        it, ns, "data", pv, pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID));
  }

  /**
   * A raw block claim grows while a Pod holds it: the provisioner finishes the claim itself, and
   * the node component's rescan lets the running Pod see the device's new size.
   */
  @Test
  @Execution(ExecutionMode.CONCURRENT)
  void aRunningPodSeesItsRawBlockClaimGrow(LocalInstall it) throws Exception {
    String ns = it.namespace("e2e-growraw");
    it.kubectl.ok(Claims.blockYaml(ns, "raw", "e2e-growing-ext4"), "apply", "-f", "-");
    PersistentVolume pv = it.claims.bound(ns, "raw");
    it.pods.namespaceReady(ns);
    // The Pod says the size it saw first, and the size once it is 3 GiB (or after 170 s).
    String size = "blockdev --getsize64 " + Pods.DEVICE;
    it.kubectl.ok(
        Pods.blockYaml(
            ns,
            "holder",
            "raw",
            node.name(),
            String.join(
                "\n",
                "first=$(" + size + ") || exit 1",
                "i=0; while [ $i -lt 170 ] && [ \"$(" + size + ")\" != 3221225472 ]; do",
                "  i=$((i + 1)); sleep 1",
                "done",
                "echo \"$first $(" + size + ")\" > /dev/termination-log")),
        "create",
        "-f",
        "-");
    it.pods.running(ns, "holder", KubeletCases.POD);
    // Grown only once the node component watches the device: the growth it then says is its
    // rescan's (a component that first sees a grown device has nothing to say of it).
    String watched = pv.getMetadata().getName() + " (/dev/sd";
    Waits.await(
        "the node component watching " + pv.getMetadata().getName(),
        () -> nodeComponentLog().contains(watched),
        Duration.ofSeconds(120));

    assertThat(ClaimLifecycleE2EIT.request(it, ns, "raw", "3Gi").ok()).isTrue();
    Pods.Ended ended = it.pods.ended(ns, "holder", Duration.ofSeconds(240));
    assertThat(ended.message())
        .as(
            "the device's size in the running Pod, before and after (node component: "
                + nodeComponentLog()
                + ")")
        .isEqualTo((1L << 30) + " " + (3L << 30));
    assertThat(ended.succeeded()).as(ended.toString()).isTrue();
    assertThat(claim(it, ns, "raw").getStatus().getCapacity().get("storage"))
        .isEqualTo(new Quantity("3Gi"));
    assertThat(nodeComponentLog())
        .contains(
            pv.getMetadata().getName() + " (/dev/sd",
            "raw block for 1 Pod): device 1.00 GiB -> 3.00 GiB");

    it.pods.delete(ns, "holder", KubeletCases.POD);
    ClaimLifecycleE2EIT.deleteAndAwaitTearDown(
        it, ns, "raw", pv, pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID));
  }

  /**
   * The attack on the control plane: a user raises an RBD claim's request, for Kubernetes' own
   * expand controller to take it (it takes in-tree rbd claims too, and on 1.20 a claim written by
   * another meanwhile crashed the whole controller-manager). A class that allows expansion gets no
   * in-tree rbd PV at all; in one that does not, the API server itself refuses the raise, with no
   * webhook asked. Only when the admin allows expansion on such a class afterwards does a raise
   * reach the expand controller: the provisioner refuses it, and the controller-manager lives
   * through the controller's own failed try.
   */
  @Test
  @Execution(ExecutionMode.CONCURRENT)
  void anRbdClaimIsNotGrownAndTheControllerManagerLivesThroughIt(LocalInstall it) throws Exception {
    java.nio.file.Path pidFile =
        java.nio.file.Path.of(it.kubeEnv.get("KUBE_LOCAL_CONTROLLER_MANAGER_PID"));
    long kcm = Long.parseLong(java.nio.file.Files.readString(pidFile).strip());
    String ns = it.namespace("e2e-growrbd");
    it.kubectl.ok(Claims.yaml(ns, "growable", "e2e-growing-rbd", ""), "apply", "-f", "-");
    Waits.await(
        "the provisioner's refusal of an in-tree rbd PV in a class that allows expansion",
        () ->
            it.admin.v1().events().inNamespace(ns).list().getItems().stream()
                .anyMatch(e -> String.valueOf(e.getMessage()).contains("allows volume expansion")),
        Duration.ofSeconds(180));
    assertThat(claim(it, ns, "growable").getSpec().getVolumeName()).as("no PV").isNull();
    // Refused for good, it would still be tried again (volume made, exported, undone) at every
    // resync until the suite ends, beside classes that count the run's volumes.
    it.kubectl.ok(null, "delete", "pvc", "growable", "-n", ns, "--timeout=60s");

    it.kubectl.ok(Claims.yaml(ns, "data", "e2e-rbd-fixed", ""), "apply", "-f", "-");
    PersistentVolume pv = it.claims.bound(ns, "data");
    String volumeId = pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    var refused = ClaimLifecycleE2EIT.request(it, ns, "data", "3Gi");
    assertThat(refused.ok()).as("the API server's own refusal: %s", refused).isFalse();
    assertThat(refused.err()).contains("must support resize");

    it.kubectl.ok(
        null, "patch", "storageclass", "e2e-rbd-fixed", "-p", "{\"allowVolumeExpansion\":true}");
    // The API server's admission reads classes from its own informer: a moment behind the patch.
    Waits.await(
        "the raise admitted once the class allows it",
        () -> ClaimLifecycleE2EIT.request(it, ns, "data", "3Gi").ok(),
        Duration.ofSeconds(30));
    Waits.await(
        "the provisioner's refusal",
        () ->
            it.admin.v1().events().inNamespace(ns).list().getItems().stream()
                .anyMatch(e -> e.getMessage().contains("growing in-tree rbd PVs is refused")),
        Duration.ofSeconds(60));
    // The expand controller's own tries (its rbd plugin has no admin Secret), and then more of its
    // retries with backoff: the row is about the controller-manager living through them.
    Waits.await(
        "the expand controller's own failed try",
        () ->
            it.admin.v1().events().inNamespace(ns).list().getItems().stream()
                .anyMatch(e -> e.getMessage().contains("failed to get admin secret")),
        Duration.ofSeconds(60));
    Thread.sleep(20_000);

    assertThat(ProcessHandle.of(kcm).map(ProcessHandle::isAlive).orElse(false))
        .as("kube-controller-manager (pid %d) alive", kcm)
        .isTrue();
    assertThat(it.cinder.getVolume(volumeId).orElseThrow().sizeGib()).isEqualTo(1);
    assertThat(claim(it, ns).getStatus().getCapacity().get("storage"))
        .isEqualTo(new Quantity("1Gi"));

    // Deleted as it is, the claim crashed the controller-manager here: the expand controller's
    // next retry patched a claim that was gone (docs/provisioner.md). The admin's way out first.
    it.admin
        .persistentVolumeClaims()
        .inNamespace(ns)
        .withName("data")
        .editStatus(
            c -> {
              c.getStatus().getCapacity().put("storage", new Quantity("3Gi"));
              return c;
            });
    // Its lister sees the status in well under a second; a retry after that returns before any
    // patch (the capacity is the request).
    Thread.sleep(5_000);
    ClaimLifecycleE2EIT.deleteAndAwaitTearDown(it, ns, "data", pv, volumeId);
    Thread.sleep(10_000);
    assertThat(ProcessHandle.of(kcm).map(ProcessHandle::isAlive).orElse(false))
        .as("kube-controller-manager (pid %d) alive after the claim's deletion", kcm)
        .isTrue();
  }

  /** The HTTP status of a merge patch of the claim's status with a node's own credentials. */
  private static int patchStatusAs(LocalNode n, String ns, String body) {
    LocalNode.Result r =
        n.run(
            String.join(
                "\n",
                "k=/node/kubelet",
                "server=$(sed -n 's/.*server: \"\\([^\"]*\\)\".*/\\1/p' $k/kubelet.kubeconfig)",
                "curl -s -o /dev/null -w '%{http_code}' --cacert $k/ca.crt --cert $k/kubelet.crt"
                    + " --key $k/kubelet.key -X PATCH"
                    + " -H 'Content-Type: application/merge-patch+json' -d "
                    + quote(body)
                    + " \"$server/api/v1/namespaces/"
                    + ns
                    + "/persistentvolumeclaims/data/status\""),
            Duration.ofSeconds(60));
    assertThat(r.output().strip()).as(r.output()).matches("[0-9]{3}");
    return Integer.parseInt(r.output().strip());
  }

  private static String nodeComponentLog() {
    return node.run("cat " + LOG, Duration.ofSeconds(30)).output();
  }

  private static PersistentVolumeClaim claim(LocalInstall it, String ns) {
    return claim(it, ns, "data");
  }

  private static PersistentVolumeClaim claim(LocalInstall it, String ns, String name) {
    return it.admin.persistentVolumeClaims().inNamespace(ns).withName(name).get();
  }

  private static boolean waits(PersistentVolumeClaim c) {
    return c.getStatus().getConditions() != null
        && c.getStatus().getConditions().stream()
            .anyMatch(x -> "FileSystemResizePending".equals(x.getType()));
  }

  /** The size the Pod's df last said, in KiB, once it passes {@code until}. */
  private static long awaitDf(String dir, java.util.function.LongPredicate until) {
    long[] last = {-1};
    Waits.await(
        "the Pod's df",
        () -> {
          LocalNode.Result r =
              node.run(
                  "cat " + quote(dir + "/df") + " 2>/dev/null || true", Duration.ofSeconds(30));
          String s = r.output().strip();
          last[0] = s.matches("[0-9]+") ? Long.parseLong(s) : -1;
          return last[0] >= 0 && until.test(last[0]);
        },
        Duration.ofSeconds(60));
    return last[0];
  }
}
