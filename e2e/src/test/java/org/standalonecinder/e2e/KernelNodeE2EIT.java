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
    assertThat(out.output()).contains("No active sessions");
    ClaimLifecycleE2EIT.deleteAndAwaitTearDown(
        it,
        ns,
        "data",
        pv,
        pv.getMetadata().getAnnotations().get(org.standalonecinder.api.ClaimAnnotations.VOLUME_ID));
  }

  /**
   * The in-tree RBD PV (Kubernetes 1.20's form), mapped by the node's kernel with the PV's
   * monitors, pool, image and user and the cephx key of its Secret, as the kubelet's rbd plugin
   * maps it; then formatted with the PV's fsType, written, read back and unmapped.
   */
  @Test
  void theKernelMapsTheRbdPvsImageWithItsCephxKey(LocalInstall it) throws Exception {
    it.kubectl.ok(ClaimLifecycleE2EIT.CEPH_CLASSES, "apply", "-f", "-");
    String ns = it.namespace("e2e-kernel-rbd");
    it.kubectl.ok(Claims.yaml(ns, "data", "e2e-ceph", ""), "apply", "-f", "-");
    PersistentVolume pv = it.claims.bound(ns, "data");
    var rbd = pv.getSpec().getRbd();
    Secret secret =
        it.admin
            .secrets()
            .inNamespace(rbd.getSecretRef().getNamespace())
            .withName(rbd.getSecretRef().getName())
            .get();
    String key =
        new String(
            java.util.Base64.getDecoder().decode(secret.getData().get("key")),
            java.nio.charset.StandardCharsets.UTF_8);
    String mount = "/mnt/" + pv.getMetadata().getName();
    String image = rbd.getPool() + "/" + rbd.getImage();
    LocalNode.Result r =
        node.run(
            String.join(
                "\n",
                "set -e",
                "modprobe rbd",
                "DEV=$(rbd device map --id "
                    + quote(rbd.getUser())
                    + " --key "
                    + quote(key)
                    + " -m "
                    + quote(String.join(",", rbd.getMonitors()))
                    + " "
                    + quote(image)
                    + ")",
                "echo DEVICE=$DEV",
                "mkfs -t " + rbd.getFsType() + " -q $DEV",
                "echo FSTYPE=$(blkid -o value -s TYPE $DEV)",
                "mkdir -p " + quote(mount),
                "mount $DEV " + quote(mount),
                "echo 'written through the kernel rbd client' > " + quote(mount + "/hello"),
                "umount " + quote(mount),
                "mount $DEV " + quote(mount),
                "echo READ=$(cat " + quote(mount + "/hello") + ")",
                "umount " + quote(mount),
                "rbd device unmap $DEV",
                "echo MAPPED=$(rbd device list | wc -l)"),
            STEP);
    assertThat(r.ok()).as(r.output()).isTrue();
    assertThat(NodeIscsi.printed(r, "DEVICE")).matches("/dev/rbd[0-9]+");
    assertThat(NodeIscsi.printed(r, "FSTYPE")).isEqualTo("ext4");
    assertThat(NodeIscsi.printed(r, "READ")).isEqualTo("written through the kernel rbd client");
    assertThat(NodeIscsi.printed(r, "MAPPED")).isEqualTo("0");
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
                "echo ROUTES=$(ip route | wc -l)",
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

  /**
   * A clone made by Cinder from the source's volume holds the source's filesystem and files, as the
   * node's kernel reads them through the clone's own target and CHAP secret.
   */
  @Test
  void aClonesPvHoldsTheFilesTheNodeWroteToTheSource(LocalInstall it) throws Exception {
    it.kubectl.ok(ClaimLifecycleE2EIT.CLASSES, "apply", "-f", "-");
    String ns = it.namespace("e2e-kernel-clone");
    it.kubectl.ok(Claims.yaml(ns, "src", "e2e-cinder", ""), "apply", "-f", "-");
    PersistentVolume src = it.claims.bound(ns, "src");
    NodeIscsi source = new NodeIscsi(src, chapSecret(it, src));
    String device = attach(source);
    String mount = "/mnt/" + src.getMetadata().getName();
    LocalNode.Result write =
        node.run(
            String.join(
                "\n",
                "set -e",
                "mkfs -t ext4 -q " + device,
                "mkdir -p " + quote(mount),
                "mount " + device + " " + quote(mount),
                "echo 'the source, before the clone' > " + quote(mount + "/hello"),
                "umount " + quote(mount)),
            STEP);
    assertThat(write.ok()).as(write.output()).isTrue();
    // Logged out first: Cinder copies what the target has, and the page cache is the node's.
    detach(source);

    it.kubectl.ok(
        Claims.yaml(ns, "copy", "e2e-cinder", "k8s.io/CloneRequest: src"), "apply", "-f", "-");
    PersistentVolume copy = it.claims.bound(ns, "copy");
    NodeIscsi clone = new NodeIscsi(copy, chapSecret(it, copy));
    assertThat(clone.source.getIqn()).isNotEqualTo(source.source.getIqn());
    assertThat(clone.user).isNotEqualTo(source.user);
    String cloneDevice = attach(clone);
    String cloneMount = "/mnt/" + copy.getMetadata().getName();
    LocalNode.Result read =
        node.run(
            String.join(
                "\n",
                "set -e",
                "echo FSTYPE=$(blkid -o value -s TYPE " + cloneDevice + ")",
                "mkdir -p " + quote(cloneMount),
                "mount -o ro " + cloneDevice + " " + quote(cloneMount),
                "echo READ=$(cat " + quote(cloneMount + "/hello") + ")",
                "umount " + quote(cloneMount)),
            STEP);
    detach(clone);
    assertThat(read.ok()).as(read.output()).isTrue();
    assertThat(NodeIscsi.printed(read, "FSTYPE")).isEqualTo("ext4");
    assertThat(NodeIscsi.printed(read, "READ")).isEqualTo("the source, before the clone");
    for (var pv : java.util.List.of(copy, src)) {
      ClaimLifecycleE2EIT.deleteAndAwaitTearDown(
          it,
          ns,
          pv.getSpec().getClaimRef().getName(),
          pv,
          pv.getMetadata()
              .getAnnotations()
              .get(org.standalonecinder.api.ClaimAnnotations.VOLUME_ID));
    }
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
    Path env2 = Path.of(System.getProperty("node2.local.env", "/tmp/node-local-2/node-local.env"));
    LocalNode other =
        LocalNode.of(env2)
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        "no second node runs for "
                            + env2
                            + ": dev/node-local/start.sh --state-dir /tmp/node-local-2 (dev/test.sh"
                            + " starts both)"));
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
