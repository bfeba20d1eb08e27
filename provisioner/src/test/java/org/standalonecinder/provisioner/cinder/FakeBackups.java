package org.standalonecinder.provisioner.cinder;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The backups of {@link FakeCinderClient}, with what the real Cinder does with them (tried on
 * dev/cinder-local's cinder-backup): a backup of an available or in-use volume, kept after the
 * volume is deleted; a volume made from one is at least its size and says so in its metadata
 * ({@code src_backup_id}), and once restored carries the metadata of the volume the backup was made
 * of instead of its own (Cinder's restore replaces it whole). Called under the fake's lock.
 */
final class FakeBackups {

  private final Map<String, Backup> backups = new LinkedHashMap<>();
  private final AtomicInteger ids = new AtomicInteger();

  /** The metadata of each backup's volume when it was made: what a restore writes back. */
  private final Map<String, Map<String, String>> volumeMetadata = new LinkedHashMap<>();

  Backup create(BackupSpec spec, Volume volume) {
    if (!Set.of("available", "in-use").contains(volume.status())) {
      throw new CinderException.BadRequest(
          "Invalid volume: The volume "
              + volume.id()
              + " status must be available or in-use, but current status is: "
              + volume.status()
              + ".",
          400,
          "req-fake");
    }
    Backup b =
        new Backup(
            "backup-" + ids.incrementAndGet(),
            spec.name(),
            volume.id(),
            "creating",
            volume.sizeGib(),
            spec.metadata(),
            Instant.parse("2026-11-28T10:00:00Z").plusSeconds(ids.get()),
            null);
    backups.put(b.id(), b);
    volumeMetadata.put(b.id(), volume.metadata());
    return b;
  }

  Optional<Backup> get(String id) {
    return Optional.ofNullable(backups.get(id));
  }

  List<Backup> find(String name, Map<String, String> metadata) {
    return backups.values().stream()
        .filter(b -> name == null || name.equals(b.name()))
        .filter(b -> b.metadata().entrySet().containsAll(metadata.entrySet()))
        .toList();
  }

  /** As the backup service: a backup being made becomes available when waited for. */
  Backup await(String id, Set<String> wanted) {
    Backup b = existing(id);
    if (b.status().equals("creating")) {
      b = status(id, "available", null);
    }
    if (!wanted.contains(b.status())) {
      throw new CinderException.UnexpectedState(
          "backup " + id + " is " + b.status(), b.status(), !b.status().startsWith("error"));
    }
    return b;
  }

  void metadata(String id, Map<String, String> entries) {
    Backup b = existing(id);
    Map<String, String> merged = new LinkedHashMap<>(b.metadata());
    merged.putAll(entries);
    backups.put(
        id,
        new Backup(
            b.id(),
            b.name(),
            b.volumeId(),
            b.status(),
            b.sizeGib(),
            merged,
            b.createdAt(),
            b.failReason()));
  }

  void delete(String id) {
    backups.remove(id);
  }

  /** Sets a backup's status (and its reason), as Cinder's backup service would. */
  Backup status(String id, String status, String failReason) {
    Backup b = existing(id);
    Backup changed =
        new Backup(
            b.id(),
            b.name(),
            b.volumeId(),
            status,
            b.sizeGib(),
            b.metadata(),
            b.createdAt(),
            failReason);
    backups.put(id, changed);
    return changed;
  }

  /** What Cinder's restore makes a volume's metadata: its source's, whole, and src_backup_id. */
  Map<String, String> restoredMetadata(String backupId) {
    Map<String, String> m = new LinkedHashMap<>(volumeMetadata.getOrDefault(backupId, Map.of()));
    m.put("src_backup_id", backupId);
    return m;
  }

  Map<String, Backup> all() {
    return Map.copyOf(backups);
  }

  Backup existing(String id) {
    Backup b = backups.get(id);
    if (b == null) {
      throw new CinderException.NotFound("Backup " + id + " could not be found.", "req-fake");
    }
    return b;
  }
}
