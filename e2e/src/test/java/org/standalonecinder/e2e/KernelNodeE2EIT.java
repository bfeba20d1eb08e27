package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.standalonecinder.demo.LocalNode.quote;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.Secret;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.standalonecinder.demo.Claims;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.LocalNode;

/**
 * The PVs the provisioner makes, used by a real Linux kernel (dev/node-local: user-mode Linux 6.1):
 * its open-iscsi logs in with exactly the PV's portal, target, LUN and initiator name and the CHAP
 * Secret's values, udev links the LUN where the kubelet looks for it, and the PV's {@code fsType}
 * is made, mounted, written and read back; a wrong secret is refused.
 */
@ExtendWith(Installed.class)
// Before the fault suites: they may leave the installed provisioner stopped (it exits when it
// loses its Lease in an API server outage, and no Deployment restarts it here).
@org.junit.jupiter.api.Order(2)
class KernelNodeE2EIT {

  static final Duration STEP = Duration.ofSeconds(120);
  static LocalNode node;

  @BeforeAll
  static void theNodeRuns() throws Exception {
    node = theNode();
  }

  /** The node dev/node-local runs for this test run. */
  static LocalNode theNode() throws java.io.IOException {
    Path env = Path.of(System.getProperty("node.local.env", "/tmp/node-local/node-local.env"));
    return LocalNode.of(env)
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "no node runs for "
                        + env
                        + ": dev/node-local/start.sh starts it (dev/test.sh does)"));
  }

  /** The second node (dev/node-local --state-dir /tmp/node-local-2), with a kubelet of its own. */
  static LocalNode secondNode() throws java.io.IOException {
    Path env = Path.of(System.getProperty("node2.local.env", "/tmp/node-local-2/node-local.env"));
    return LocalNode.of(env)
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "no second node runs for "
                        + env
                        + ": dev/node-local/start.sh --state-dir /tmp/node-local-2 (dev/test.sh"
                        + " starts both)"));
  }

  private static Secret chapSecret(LocalInstall it, PersistentVolume pv) {
    var ref = pv.getSpec().getIscsi().getSecretRef();
    return it.admin.secrets().inNamespace(ref.getNamespace()).withName(ref.getName()).get();
  }

  @Test
  void theKernelLogsInWithThePvsChapSecretAndMakesMountsAndReadsItsFilesystem(LocalInstall it)
      throws Exception {
    it.kubectl.ok(ClaimLifecycleE2EIT.CLASSES, "apply", "-f", "-");
    String ns = it.namespace("e2e-kernel");
    it.kubectl.ok(Claims.yaml(ns, "data", "e2e-cinder", ""), "apply", "-f", "-");
    PersistentVolume pv = it.claims.bound(ns, "data");
    NodeIscsi iscsi = new NodeIscsi(pv, chapSecret(it, pv));
    assertThat(iscsi.source.getChapAuthSession()).isTrue();
    assertThat(iscsi.source.getFsType()).isEqualTo("ext4");

    LocalNode.Result refused = node.run(iscsi.login(iscsi.password + "x"), STEP);
    assertThat(refused.rc())
        .as("a wrong CHAP secret: iscsiadm's 24, authorization failure\n" + refused.output())
        .isEqualTo(24);

    LocalNode.Result in = node.run(iscsi.login(iscsi.password), STEP);
    assertThat(in.ok()).as(in.output()).isTrue();
    String device = NodeIscsi.printed(in, "DEVICE");
    assertThat(device).as(in.output()).matches("/dev/sd[a-z]+");

    String mount = "/mnt/" + pv.getMetadata().getName();
    LocalNode.Result fs =
        node.run(
            String.join(
                "\n",
                "set -e",
                "mkfs -t " + iscsi.source.getFsType() + " -q " + device,
                "echo FSTYPE=$(blkid -o value -s TYPE " + device + ")",
                "mkdir -p " + quote(mount),
                "mount " + device + " " + quote(mount),
                "echo 'written by the node' > " + quote(mount + "/hello"),
                "umount " + quote(mount),
                // mounted again: what is read comes from the LUN, not the page cache
                "mount " + device + " " + quote(mount),
                "echo READ=$(cat " + quote(mount + "/hello") + ")",
                "umount " + quote(mount)),
            STEP);
    assertThat(fs.ok()).as(fs.output()).isTrue();
    assertThat(NodeIscsi.printed(fs, "FSTYPE")).isEqualTo("ext4");
    assertThat(NodeIscsi.printed(fs, "READ")).isEqualTo("written by the node");

    LocalNode.Result out = node.run(iscsi.logout() + "iscsiadm -m session; true", STEP);
    assertThat(out.ok()).as(out.output()).isTrue();
    // Its own session gone: the node is shared with other classes' Pods, whose sessions the
    // kubelet ends in its own time (a Pod of DeploymentE2EIT's was still logged in here once).
    assertThat(out.output())
        .contains("Logout of [sid:")
        .doesNotContain(iscsi.source.getIqn() + " ");
    ClaimLifecycleE2EIT.deleteAndAwaitTearDown(
        it,
        ns,
        "data",
        pv,
        pv.getMetadata().getAnnotations().get(org.standalonecinder.api.ClaimAnnotations.VOLUME_ID));
  }

  /**
   * The node's network (slirp, an unrestricted NAT by itself) reaches the host's loopback and
   * nothing else: one /32 route, no resolver, every other destination refused in the node; and on
   * the host, every connection slirp makes for it goes to 127.0.0.1.
   */
  @Test
  void theNodeReachesOnlyTheHostsLoopback() throws Exception {
    LocalNode.Result net =
        node.run(
            String.join(
                "\n",
                // The pods' bridge inside the node (with --kubelet) is not a way out.
                "echo ROUTES=$(ip route | grep -vc '^10.88.0.0/24 dev cni0 ')",
                "echo RESOLVERS=$(grep -c '^nameserver' /etc/resolv.conf)",
                "for to in 10.0.2.3/53 1.1.1.1/443 192.168.0.1/80; do",
                "  timeout 5 bash -c \"exec 3<>/dev/tcp/$to\" 2>/dev/null && echo REACHED=$to",
                "done",
                // Held open while the host looks at slirp's side of it.
                "(exec 3<>/dev/tcp/127.0.0.1/6443; sleep 8) >/dev/null 2>&1 &",
                "echo HELD=yes"),
            STEP);
    assertThat(net.ok()).as(net.output()).isTrue();
    assertThat(NodeIscsi.printed(net, "ROUTES")).isEqualTo("1");
    assertThat(NodeIscsi.printed(net, "RESOLVERS")).isEqualTo("0");
    assertThat(NodeIscsi.printed(net, "REACHED")).as(net.output()).isNull();

    java.util.List<String> peers = new java.util.ArrayList<>();
    org.standalonecinder.demo.Waits.await(
        "slirp's connection to the API server for the node",
        () -> {
          peers.clear();
          peers.addAll(slirpPeers());
          return peers.contains("127.0.0.1:6443");
        },
        Duration.ofSeconds(8));
    assertThat(peers).allSatisfy(p -> assertThat(p).startsWith("127.0.0.1:"));
  }

  /** The remote ends of the host's TCP connections that slirp holds for the node. */
  private static java.util.List<String> slirpPeers() {
    try {
      Process ss = new ProcessBuilder("ss", "-tnpH").redirectErrorStream(true).start();
      String out = new String(ss.getInputStream().readAllBytes());
      ss.waitFor();
      return out.lines()
          .filter(l -> l.contains("slirp"))
          .map(l -> l.trim().split("\\s+"))
          .filter(f -> f.length >= 5)
          .map(f -> f[4])
          .toList();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Logs the node in to the PV as the kubelet would and returns the device udev linked. */
  private static String attach(NodeIscsi iscsi) {
    LocalNode.Result in = node.run(iscsi.login(iscsi.password), STEP);
    assertThat(in.ok()).as(in.output()).isTrue();
    String device = NodeIscsi.printed(in, "DEVICE");
    assertThat(device).as(in.output()).matches("/dev/sd[a-z]+");
    return device;
  }

  private static void detach(NodeIscsi iscsi) {
    LocalNode.Result out = node.run(iscsi.logout(), STEP);
    assertThat(out.ok()).as(out.output()).isTrue();
  }

  static final String SHARED =
      """
      apiVersion: storage.k8s.io/v1
      kind: StorageClass
      metadata: {name: e2e-shared}
      provisioner: openstack.org/standalone-cinder
      parameters: {type: lab-multiattach}
      reclaimPolicy: Delete
      ---
      apiVersion: v1
      kind: PersistentVolumeClaim
      metadata: {name: shared, namespace: %s}
      spec:
        storageClassName: e2e-shared
        accessModes: [ReadWriteMany]
        volumeMode: Block
        resources: {requests: {storage: 1Gi}}
      """;

  /**
   * A ReadWriteMany Block PV on a multiattach type, logged in from two nodes (two kernels) at once
   * with the PV's values: each reads, past any cache, what the other wrote to the raw device.
   */
  @Test
  void aReadWriteManyBlockPvIsLoggedInFromTwoNodesAtOnce(LocalInstall it) throws Exception {
    LocalNode other = secondNode();
    String ns = it.namespace("e2e-kernel-rwx");
    it.kubectl.ok(SHARED.formatted(ns), "apply", "-f", "-");
    PersistentVolume pv = it.claims.bound(ns, "shared");
    assertThat(pv.getSpec().getAccessModes()).containsExactly("ReadWriteMany");
    assertThat(pv.getSpec().getIscsi().getReadOnly()).isNotEqualTo(Boolean.TRUE);
    NodeIscsi iscsi = new NodeIscsi(pv, chapSecret(it, pv));
    String a = attach(iscsi);
    LocalNode.Result inB = other.run(iscsi.login(iscsi.password), STEP);
    assertThat(inB.ok()).as(inB.output()).isTrue();
    String b = NodeIscsi.printed(inB, "DEVICE");
    assertThat(b).as(inB.output()).matches("/dev/sd[a-z]+");

    // a writes at 0, b at 1 MiB; each reads the other's, direct I/O past the page cache
    String write = "printf '%%-4096s' %s | dd of=%s bs=4096 seek=%d oflag=direct 2>/dev/null";
    String read =
        "echo SAW=$(dd if=%s bs=4096 skip=%d count=1 iflag=direct 2>/dev/null | tr -d ' ')";
    assertThat(node.run(write.formatted("from-node-a", a, 0), STEP).ok()).isTrue();
    assertThat(other.run(write.formatted("from-node-b", b, 256), STEP).ok()).isTrue();
    LocalNode.Result bSaw = other.run(read.formatted(b, 0), STEP);
    LocalNode.Result aSaw = node.run(read.formatted(a, 256), STEP);
    assertThat(NodeIscsi.printed(bSaw, "SAW")).as(bSaw.output()).isEqualTo("from-node-a");
    assertThat(NodeIscsi.printed(aSaw, "SAW")).as(aSaw.output()).isEqualTo("from-node-b");

    detach(iscsi);
    LocalNode.Result outB = other.run(iscsi.logout(), STEP);
    assertThat(outB.ok()).as(outB.output()).isTrue();
    ClaimLifecycleE2EIT.deleteAndAwaitTearDown(
        it,
        ns,
        "shared",
        pv,
        pv.getMetadata().getAnnotations().get(org.standalonecinder.api.ClaimAnnotations.VOLUME_ID));
  }
}
