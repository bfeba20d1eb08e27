package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.standalonecinder.demo.LocalNode.quote;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.LocalNode;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.cinder.VolumeSpec;

/**
 * The attach CLI for real (docs/attach.md): {@code cinder attach} and {@code cinder detach} run as
 * root in the second node (a real kernel, dev/node-local, whose kubelet may run Pods meanwhile)
 * against the real Cinder. The attachment makes a real device through udev's by-path link, {@code
 * --mode ro} a device the kernel refuses to write, a mounted device is refused a detach, and the
 * detach leaves no session and the volume available.
 */
// Its rows one after another: each writes /tmp/cloud.conf and /etc/ceph in the node (the lock keeps
// the rows of a subclass that runs concurrently with other classes in one thread). Each counts only
// its own volume's sessions, records and mappings: the node's kubelet may hold others.
@ResourceLock("node-local-2")
abstract class AttachCliCases {

  static final Duration STEP = Duration.ofSeconds(180);
  static LocalNode node;

  @BeforeAll
  static void theNodeRuns() throws Exception {
    node = KernelNodeE2EIT.secondNode();
  }

  private static String cli(LocalInstall it) {
    return "java -jar "
        + node.copyIn(it.root.resolve("provisioner/target/standalone-cinder-provisioner.jar"))
        + " cinder";
  }

  private static String cloudConf(LocalInstall it) throws Exception {
    return "cat > /tmp/cloud.conf <<'CONF'\n" + Files.readString(it.cloudConfig()) + "CONF\n";
  }

  private static Volume volume(LocalInstall it) {
    Volume v = it.cinder.createVolume(VolumeSpec.blank("e2e-node-attach-" + UUID.randomUUID(), 1));
    return it.cinder.awaitVolumeStatus(v.id(), Set.of("available"), Backoff.DEFAULT);
  }

  /** The attach of {@code v} into $DEV; its error output and exit 1 when it fails. */
  private static String attach(String cinder, Volume v, String options) {
    return "DEV=$("
        + cinder
        + " attach "
        + v.id()
        + options
        + " --cloud-config /tmp/cloud.conf 2>/tmp/attach.err) || { cat /tmp/attach.err; exit 1; }";
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"read-write, rw, 0", "read-only, ro, 1"})
  void attachMakesADeviceTheKernelReadsAndWritesAsAskedAndDetachUndoesIt(
      String name, String mode, String readOnly, LocalInstall it) throws Exception {
    Volume v = volume(it);
    String cinder = cli(it);
    String mount = "/mnt/" + v.id();
    LocalNode.Result r =
        node.run(
            String.join(
                "\n",
                cloudConf(it),
                attach(cinder, v, " --mode " + mode),
                "echo DEVICE=$DEV",
                "echo REAL=$(readlink -f $DEV)",
                "echo RO=$(blockdev --getro $DEV)",
                "if dd if=/dev/zero of=$DEV bs=4k count=1 oflag=direct 2>/dev/null; then echo"
                    + " WROTE=yes; else echo WROTE=no; fi",
                "echo SESSIONS=$(iscsiadm -m session 2>/dev/null | grep -c -- " + v.id() + ")"),
            STEP);
    assertThat(r.ok()).as(r.output()).isTrue();
    String device = NodeIscsi.printed(r, "DEVICE");
    assertThat(device).as(r.output()).startsWith("/dev/disk/by-path/ip-127.0.0.1:3260-iscsi-");
    assertThat(NodeIscsi.printed(r, "REAL")).matches("/dev/sd[a-z]+");
    assertThat(NodeIscsi.printed(r, "RO")).isEqualTo(readOnly);
    assertThat(NodeIscsi.printed(r, "WROTE")).isEqualTo(readOnly.equals("1") ? "no" : "yes");
    assertThat(NodeIscsi.printed(r, "SESSIONS")).isEqualTo("1");
    Volume attached = it.cinder.getVolume(v.id()).orElseThrow();
    assertThat(attached.status()).isEqualTo("in-use");

    LocalNode.Result d =
        node.run(
            String.join(
                "\n",
                cloudConf(it),
                cinder + " detach " + v.id() + " --cloud-config /tmp/cloud.conf",
                "echo DETACHED=$?",
                "echo SESSIONS=$(iscsiadm -m session 2>/dev/null | grep -c -- " + v.id() + ")",
                "echo RECORDS=$(iscsiadm -m node 2>/dev/null | grep -c -- " + v.id() + ")"),
            STEP);
    assertThat(NodeIscsi.printed(d, "DETACHED")).as(d.output()).isEqualTo("0");
    assertThat(NodeIscsi.printed(d, "SESSIONS")).isEqualTo("0");
    assertThat(NodeIscsi.printed(d, "RECORDS")).isEqualTo("0");
    assertThat(it.cinder.getVolume(v.id()).orElseThrow().status()).isEqualTo("available");
    it.cinder.deleteVolume(v.id());
  }

  @Test
  void aMountedDeviceIsRefusedADetachUntilItIsUnmounted(LocalInstall it) throws Exception {
    Volume v = volume(it);
    String cinder = cli(it);
    String mount = "/mnt/" + v.id();
    LocalNode.Result r =
        node.run(
            String.join(
                "\n",
                cloudConf(it),
                attach(cinder, v, ""),
                "mkfs.ext4 -q $DEV && mkdir -p " + quote(mount) + " && mount $DEV " + quote(mount),
                cinder + " detach " + v.id() + " --cloud-config /tmp/cloud.conf 2>/tmp/detach.err",
                "echo REFUSED=$?",
                "grep -m1 -i 'mounted\\|in use' /tmp/detach.err | sed 's/^/WHY=/'",
                "echo STILL=$(iscsiadm -m session 2>/dev/null | grep -c -- " + v.id() + ")",
                "umount " + quote(mount),
                cinder + " detach " + v.id() + " --cloud-config /tmp/cloud.conf 2>/tmp/detach.err",
                "echo DETACHED=$?",
                "echo SESSIONS=$(iscsiadm -m session 2>/dev/null | grep -c -- " + v.id() + ")"),
            STEP);
    assertThat(r.ok()).as(r.output()).isTrue();
    assertThat(NodeIscsi.printed(r, "REFUSED")).as(r.output()).isEqualTo("7");
    assertThat(NodeIscsi.printed(r, "WHY")).as(r.output()).isNotNull();
    assertThat(NodeIscsi.printed(r, "STILL")).isEqualTo("1");
    assertThat(NodeIscsi.printed(r, "DETACHED")).as(r.output()).isEqualTo("0");
    assertThat(NodeIscsi.printed(r, "SESSIONS")).isEqualTo("0");
    assertThat(it.cinder.getVolume(v.id()).orElseThrow().status()).isEqualTo("available");
    it.cinder.deleteVolume(v.id());
  }

  /**
   * The attack the kubelet makes by accident: its SendTargets discovery for another volume on the
   * same portal leaves a record of every target there (with the portal group tag discovery
   * reports), this one's too, under an interface named after its own PV and with that PV's CHAP.
   * The attach neither logs in through that record (its secret is wrong: the login would fail, as
   * it did in CI before the attach named its interface) nor changes or deletes it.
   */
  @Test
  void aRecordOfTheTargetUnderAnotherInterfaceWithAnotherSecretIsNeitherUsedNorChanged(
      LocalInstall it) throws Exception {
    Volume v = volume(it);
    String cinder = cli(it);
    String iface = "127.0.0.1:3260:pvc-" + UUID.randomUUID();
    String foreign =
        "-m node -T iqn.2010-10.org.openstack:volume-"
            + v.id()
            + " -p 127.0.0.1:3260,1 -I "
            + quote(iface);
    LocalNode.Result r =
        node.run(
            String.join(
                "\n",
                cloudConf(it),
                "iscsiadm -m iface -I " + quote(iface) + " --op new >/dev/null",
                "iscsiadm " + foreign + " --op new >/dev/null",
                "iscsiadm " + foreign + " --op update -n node.session.auth.authmethod -v CHAP",
                "iscsiadm " + foreign + " --op update -n node.session.auth.username -v someone",
                "iscsiadm "
                    + foreign
                    + " --op update -n node.session.auth.password -v wrongwrong12",
                attach(cinder, v, ""),
                "echo SESSIONS=$(iscsiadm -m session 2>/dev/null | grep -c -- " + v.id() + ")",
                cinder + " detach " + v.id() + " --cloud-config /tmp/cloud.conf",
                "echo DETACHED=$?",
                "echo FOREIGN=$(iscsiadm "
                    + foreign
                    + " 2>/dev/null | grep -c 'node.session.auth.username = someone')",
                "iscsiadm " + foreign + " --op delete",
                "iscsiadm -m iface -I " + quote(iface) + " --op delete >/dev/null"),
            STEP);
    assertThat(r.ok()).as(r.output()).isTrue();
    assertThat(NodeIscsi.printed(r, "SESSIONS")).as(r.output()).isEqualTo("1");
    assertThat(NodeIscsi.printed(r, "DETACHED")).as(r.output()).isEqualTo("0");
    assertThat(NodeIscsi.printed(r, "FOREIGN"))
        .as("the kubelet's record, as it was")
        .isEqualTo("1");
    assertThat(it.cinder.getVolume(v.id()).orElseThrow().status()).isEqualTo("available");
    it.cinder.deleteVolume(v.id());
  }

  /**
   * An RBD volume: {@code cinder attach} maps its image with the node's kernel rbd client (the
   * keyring of the Ceph user Cinder names in /etc/ceph, as docs/attach.md asks of the admin), the
   * device reads and writes, and {@code cinder detach} unmaps it.
   */
  @Test
  void anRbdVolumeIsMappedByTheKernelAndUnmappedByTheDetach(LocalInstall it) throws Exception {
    Volume v =
        it.cinder.createVolume(
            VolumeSpec.blank("e2e-node-attach-rbd-" + UUID.randomUUID(), 1).withType("lab-rbd"));
    v = it.cinder.awaitVolumeStatus(v.id(), Set.of("available"), Backoff.DEFAULT);
    String cinder = cli(it);
    Path keyring = Path.of(it.cinderEnv.get("CEPH_CINDER_KEYRING"));
    LocalNode.Result r =
        node.run(
            String.join(
                "\n",
                cloudConf(it),
                "mkdir -p /etc/ceph",
                "cat > /etc/ceph/" + keyring.getFileName() + " <<'KEYRING'",
                Files.readString(keyring).strip(),
                "KEYRING",
                "chmod 600 /etc/ceph/" + keyring.getFileName(),
                attach(cinder, v, ""),
                "echo DEVICE=$DEV",
                "echo REAL=$(readlink -f $DEV)",
                "echo 'through the kernel rbd client' | dd of=$DEV bs=4k conv=sync oflag=direct"
                    + " 2>/dev/null",
                "echo READ=$(dd if=$DEV bs=4k count=1 iflag=direct 2>/dev/null | tr -d '\\0')",
                cinder + " detach " + v.id() + " --cloud-config /tmp/cloud.conf 2>/tmp/detach.err",
                "echo DETACHED=$?",
                "echo MAPPED=$(rbd device list 2>/dev/null | grep -c -- " + v.id() + ")",
                "rm -f /etc/ceph/" + keyring.getFileName()),
            STEP);
    assertThat(r.ok()).as(r.output()).isTrue();
    // udev's link for the image, the kernel's device behind it
    assertThat(NodeIscsi.printed(r, "DEVICE"))
        .as(r.output())
        .isEqualTo("/dev/rbd/volumes/volume-" + v.id());
    assertThat(NodeIscsi.printed(r, "REAL")).matches("/dev/rbd[0-9]+");
    assertThat(NodeIscsi.printed(r, "READ")).isEqualTo("through the kernel rbd client");
    assertThat(NodeIscsi.printed(r, "DETACHED")).as(r.output()).isEqualTo("0");
    assertThat(NodeIscsi.printed(r, "MAPPED")).isEqualTo("0");
    assertThat(it.cinder.getVolume(v.id()).orElseThrow().status()).isEqualTo("available");
    it.cinder.deleteVolume(v.id());
  }
}
