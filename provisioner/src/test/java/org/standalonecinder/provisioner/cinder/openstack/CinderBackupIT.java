package org.standalonecinder.provisioner.cinder.openstack;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.Backup;
import org.standalonecinder.provisioner.cinder.BackupSpec;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.Connector;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.cinder.VolumeSpec;
import org.standalonecinder.provisioner.cinder.openstack.LocalCinder.Mode;

/**
 * Backups against the real local Cinder and its cinder-backup (posix driver), through keystone: a
 * backup of a volume in use outlives the volume, and volumes made from it hold its bytes, in the
 * volume's backend and in another.
 */
class CinderBackupIT {

  private static final Set<String> AVAILABLE = Set.of("available");
  private static final Backoff WAIT =
      Backoff.DEFAULT.withDeadline(java.time.Duration.ofSeconds(120));
  private static final Connector NODE =
      new Connector("iqn.2026-11.org.standalonecinder:it-node", "it-node", "127.0.0.1", false);

  private final List<Runnable> cleanup = new ArrayList<>();

  @AfterEach
  void cleanUp() {
    for (int i = cleanup.size() - 1; i >= 0; i--) {
      try {
        cleanup.get(i).run();
      } catch (RuntimeException e) {
        // keep cleaning
      }
    }
  }

  private Volume newVolume(CinderClient c, VolumeSpec spec) {
    Volume v = c.createVolume(spec);
    cleanup.add(
        () -> {
          c.deleteVolume(v.id());
          c.awaitVolumeDeleted(v.id(), WAIT);
        });
    return c.awaitVolumeStatus(v.id(), AVAILABLE, WAIT);
  }

  /** The file a volume of the lab's file backend is (dev/cinder-local's driver). */
  private static Path file(Volume v) {
    return Path.of(
        LocalCinder.env().get("CINDER_LOCAL_STATE"), "cinder", "file-volumes", "volume-" + v.id());
  }

  private static String unique(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  // As a project member through keystone, as the provisioner runs: its listing is what Cinder
  // filters for users who are not admins (the noauth API is admin, and the calls are the same).
  @ParameterizedTest(name = "{0}")
  @EnumSource(
      value = Mode.class,
      names = {"KEYSTONE"})
  void aBackupOfAVolumeInUseOutlivesItAndIsRestoredInAnyBackend(Mode mode) throws Exception {
    CinderClient c = OpenStackCinderClient.create(LocalCinder.config(mode));
    cleanup.add(c::close);
    Volume source = newVolume(c, VolumeSpec.blank(unique("it-bksrc"), 1).withType("lab-iscsi"));
    byte[] data = ("backed up " + UUID.randomUUID()).getBytes(StandardCharsets.US_ASCII);
    Files.write(file(source), data, StandardOpenOption.WRITE);
    c.reserve(source.id());
    c.initializeConnection(source.id(), NODE);
    c.markAttached(source.id(), NODE.host(), "/dev/vdb", false);
    Volume inUse = c.awaitVolumeStatus(source.id(), Set.of("in-use"), WAIT);

    String name = unique("it-backup");
    Map<String, String> md = Map.of("cluster", "it-" + UUID.randomUUID());
    Backup made = c.createBackup(new BackupSpec(name, source.id(), "an IT backup", md));
    cleanup.add(
        () -> {
          c.deleteBackup(made.id());
          c.awaitBackupDeleted(made.id(), WAIT);
        });
    Backup b = c.awaitBackupStatus(made.id(), AVAILABLE, WAIT);
    assertThat(b.volumeId()).isEqualTo(source.id());
    assertThat(b.sizeGib()).isEqualTo(1);
    assertThat(b.metadata()).isEqualTo(md);
    // Found again by name and metadata (a retry); another cluster's metadata finds nothing.
    assertThat(c.findBackups(name, md)).extracting(Backup::id).containsExactly(b.id());
    assertThat(c.findBackups(name, Map.of("cluster", "another"))).isEmpty();
    // An entry set keeps the others (Cinder's PUT replaces the metadata whole: merged here).
    c.updateBackupMetadata(b.id(), Map.of("policy", "Retain"));
    assertThat(c.getBackup(b.id()).orElseThrow().metadata())
        .containsAllEntriesOf(md)
        .containsEntry("policy", "Retain")
        .hasSize(md.size() + 1);

    // The volume goes; its backup stays.
    c.markDetached(source.id(), inUse.attachmentIds().get(0));
    c.awaitVolumeStatus(source.id(), AVAILABLE, WAIT);
    c.deleteVolume(source.id());
    c.awaitVolumeDeleted(source.id(), WAIT);
    assertThat(c.getBackup(b.id())).get().extracting(Backup::status).isEqualTo("available");

    Volume same =
        newVolume(
            c, VolumeSpec.blank(unique("it-bkfile"), 2).withType("lab-iscsi").fromBackup(b.id()));
    assertThat(same.sizeGib()).isEqualTo(2);
    assertThat(same.metadata()).containsEntry("src_backup_id", b.id());
    byte[] read = new byte[data.length];
    try (var in = Files.newInputStream(file(same))) {
      assertThat(in.readNBytes(read, 0, read.length)).isEqualTo(data.length);
    }
    assertThat(read).isEqualTo(data);
    // Cinder's backup service marks the restored volume available before the backup (2023.1,
    // BackupManager.restore_backup saves the volume, then the backup): a restore started in
    // between is refused ("Originating backup status must be one of 'available'"). The
    // provisioner retries that refusal; here the backup is waited for.
    c.awaitBackupStatus(b.id(), AVAILABLE, WAIT);
    Volume other =
        newVolume(
            c, VolumeSpec.blank(unique("it-bkrbd"), 1).withType("lab-rbd").fromBackup(b.id()));
    assertThat(other.volumeType()).isEqualTo("lab-rbd");
    assertThat(other.metadata()).containsEntry("src_backup_id", b.id());

    c.deleteBackup(b.id());
    c.awaitBackupDeleted(b.id(), WAIT);
    assertThat(c.getBackup(b.id())).isEmpty();
    // Deleting again is no error: every step of a release must be safe to repeat.
    c.deleteBackup(b.id());
  }
}
