package org.standalonecinder.provisioner.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.Connector;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.cinder.VolumeSpec;
import org.standalonecinder.provisioner.cinder.openstack.LocalCinder;
import org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfigLoader;

/**
 * The attach without Nova against the real local Cinder, with libiscsi standing in for the kernel's
 * initiator ({@link LibiscsiHost}): Cinder's side end to end, the login made only of the iscsiadm
 * commands the attacher runs, the bytes read and written through it.
 */
class AttachIT {

  static final String INITIATOR = "iqn.2026-11.org.standalonecinder:attach-it";
  static final Connector HOST = new Connector(INITIATOR, "attach-it-host", "127.0.0.1", false);

  @TempDir Path dir;

  final List<AutoCloseable> cleanup = new ArrayList<>();
  final List<String> said = new ArrayList<>();

  @AfterEach
  void cleanUp() throws Exception {
    for (int i = cleanup.size() - 1; i >= 0; i--) {
      try {
        cleanup.get(i).close();
      } catch (RuntimeException e) {
        // the test's own assertions say what went wrong
      }
    }
  }

  /** A client of the real Cinder that uses at most {@code microversion} (null: the newest). */
  CinderClient cinder(String microversion) throws IOException {
    Map<String, String> e = LocalCinder.env();
    String ini =
        "[Global]\ncinder-endpoint = "
            + e.get("CINDER_ENDPOINT")
            + "\ntenant-id = "
            + e.get("CINDER_PROJECT_ID")
            + "\n"
            + (microversion == null
                ? ""
                : "[BlockStorage]\nmax-microversion = " + microversion + "\n");
    Path conf = Files.writeString(dir.resolve("cloud-" + microversion + ".conf"), ini);
    CinderClient c = OpenStackCinderClient.create(CloudConfigLoader.load(conf, Map.of()));
    cleanup.add(c);
    return c;
  }

  Volume volume(CinderClient c) {
    Volume v = c.createVolume(VolumeSpec.blank("attach-it-" + UUID.randomUUID(), 1));
    cleanup.add(
        () -> {
          c.getVolume(v.id())
              .ifPresent(now -> c.listAttachments(v.id()).forEach(a -> c.deleteAttachment(a.id())));
          c.deleteVolume(v.id());
        });
    return c.awaitVolumeStatus(v.id(), Set.of("available"), Backoff.DEFAULT);
  }

  static String nodeCommand(String iqn, String rest) {
    return "iscsiadm -m node -T "
        + iqn
        + " -p "
        + LocalCinder.env().getOrDefault("CINDER_ISCSI_PORTAL", "127.0.0.1:3260")
        + " --interface default "
        + rest;
  }

  @ParameterizedTest(name = "microversion {0}")
  @ValueSource(strings = {"3.70", "3.0"})
  void aVolumeIsAttachedUsedAndDetachedWithCinderInUseThenAvailable(String microversion)
      throws Exception {
    CinderClient c = cinder(microversion);
    Volume v = volume(c);
    LibiscsiHost host = new LibiscsiHost(INITIATOR);
    Attacher attacher = new Attacher(c, host, HOST, Duration.ofSeconds(20), said::add);

    Attacher.Attached a = attacher.attach(v.id(), false);

    String iqn = "iqn.2010-10.org.openstack:volume-" + v.id();
    assertThat(a.legacy()).isEqualTo(microversion.equals("3.0"));
    assertThat(a.device()).startsWith("/dev/disk/by-path/ip-").endsWith("-iscsi-" + iqn + "-lun-1");
    Volume inUse = c.getVolume(v.id()).orElseThrow();
    assertThat(inUse.status()).isEqualTo("in-use");
    assertThat(inUse.attachedHosts())
        .containsExactly(Map.entry(a.attachmentId(), "attach-it-host"));
    if (!a.legacy()) {
      assertThat(c.getAttachment(a.attachmentId()).orElseThrow().status()).isEqualTo("attached");
    }
    assertThat(host.commands())
        .as("the exact iscsiadm commands, the CHAP secret masked")
        .containsExactly(
            nodeCommand(iqn, "--op new"),
            nodeCommand(iqn, "--op update -n node.session.auth.authmethod -v CHAP"),
            host.commands().get(2),
            nodeCommand(iqn, "--op update -n node.session.auth.password -v ***"),
            nodeCommand(iqn, "--login"),
            nodeCommand(iqn, "--op update -n node.startup -v automatic"));
    assertThat(host.commands().get(2))
        .startsWith(nodeCommand(iqn, "--op update -n node.session.auth.username -v "));
    assertThat(host.target(a.device()).io("write -P 0x3c 0 1M", "read -P 0x3c 0 1M").ok()).isTrue();
    assertThat(String.join("\n", said)).doesNotContain(host.target(a.device()).password());

    Attacher.Detached d = attacher.detach(v.id(), null, false);

    assertThat(d.attachmentId()).isEqualTo(a.attachmentId());
    assertLeftAsItWas(c, v, host);
    assertThat(host.commands())
        .endsWith(
            nodeCommand(iqn, "--op update -n node.startup -v manual"),
            nodeCommand(iqn, "--logout"),
            nodeCommand(iqn, "--op delete"));
    assertThat(tgtTargets()).as("Cinder withdrew the export").doesNotContain(iqn);
  }

  @Test
  void aReadOnlyAttachIsRecordedAsRoAndItsDeviceIsSetReadOnly() throws Exception {
    CinderClient c = cinder(null);
    Volume v = volume(c);
    LibiscsiHost host = new LibiscsiHost(INITIATOR);
    Attacher attacher = new Attacher(c, host, HOST, Duration.ofSeconds(20), said::add);

    Attacher.Attached a = attacher.attach(v.id(), true);

    assertThat(host.readOnlyDevices()).containsExactly(a.device());
    assertThat(c.getAttachment(a.attachmentId()).orElseThrow().mode()).isEqualTo("ro");
    attacher.detach(v.id(), null, false);
    assertThat(c.getVolume(v.id()).orElseThrow().status()).isEqualTo("available");
  }

  @ParameterizedTest(name = "microversion {0}")
  @ValueSource(strings = {"3.70", "3.0"})
  void aLoginWithAWrongSecretMakesNoDeviceAndLeavesCinderAsItWas(String microversion)
      throws Exception {
    CinderClient c = cinder(microversion);
    Volume v = volume(c);
    // a host whose iscsiadm keeps a secret other than the one it was given
    LibiscsiHost host =
        new LibiscsiHost(INITIATOR) {
          @Override
          public synchronized Result run(Command command) {
            List<String> argv = new ArrayList<>(command.argv());
            if (argv.contains("node.session.auth.password")) {
              argv.set(argv.size() - 1, "not-the-secret");
            }
            return super.run(new Command(argv, command.alsoOk()));
          }
        };
    Attacher attacher = new Attacher(c, host, HOST, Duration.ofSeconds(3), said::add);

    assertThatThrownBy(() -> attacher.attach(v.id(), false))
        .isInstanceOf(HostException.class)
        .hasMessageContaining("the device did not appear within 3 s");

    assertLeftAsItWas(c, v, host);
    assertThat(said).anyMatch(l -> l.startsWith("undo: "));
  }

  /** Cinder and the host as before the attach: no attachment, no session, no node record. */
  static void assertLeftAsItWas(CinderClient c, Volume v, LibiscsiHost host) {
    Volume after = c.getVolume(v.id()).orElseThrow();
    assertThat(after.status()).isEqualTo("available");
    assertThat(after.attachmentIds()).isEmpty();
    assertThat(c.listAttachments(v.id())).isEmpty();
    assertThat(host.sessions()).isEmpty();
    assertThat(host.records()).isEmpty();
  }

  static String tgtTargets() throws IOException, InterruptedException {
    Process p =
        new ProcessBuilder("tgtadm", "--lld", "iscsi", "--mode", "target", "--op", "show")
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes());
    p.waitFor();
    return out;
  }
}
