package org.standalonecinder.provisioner.cinder;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The snapshots of {@link FakeCinderClient}, with what the real Cinder checks of them
 * (../shared/cinder-lab/REPORT.md): a volume being attached cannot be snapshotted, a volume with
 * snapshots cannot be deleted, a volume made from one is at least its size. Called under the fake's
 * lock.
 */
final class FakeSnapshots {

  private final Map<String, Snapshot> snapshots = new LinkedHashMap<>();
  private final AtomicInteger ids = new AtomicInteger();

  Snapshot create(SnapshotSpec spec, Volume volume) {
    if (!Set.of("available", "in-use").contains(volume.status())) {
      throw new CinderException.BadRequest(
          "Invalid volume: Volume "
              + volume.id()
              + " status must be available or in-use, but current status is: "
              + volume.status()
              + ".",
          400,
          "req-fake");
    }
    Snapshot s =
        new Snapshot(
            "snap-" + ids.incrementAndGet(),
            spec.name(),
            volume.id(),
            "creating",
            volume.sizeGib(),
            spec.metadata(),
            Instant.parse("2026-11-27T10:00:00Z").plusSeconds(ids.get()));
    snapshots.put(s.id(), s);
    return s;
  }

  Optional<Snapshot> get(String id) {
    return Optional.ofNullable(snapshots.get(id));
  }

  List<Snapshot> find(String name, Map<String, String> metadata) {
    return snapshots.values().stream()
        .filter(s -> name == null || name.equals(s.name()))
        .filter(s -> s.metadata().entrySet().containsAll(metadata.entrySet()))
        .toList();
  }

  /** As the volume service: a snapshot being created becomes available when waited for. */
  Snapshot await(String id, Set<String> wanted) {
    Snapshot s = existing(id);
    if (s.status().equals("creating")) {
      s = status(id, "available");
    }
    if (!wanted.contains(s.status())) {
      throw new CinderException.UnexpectedState(
          "snapshot " + id + " is " + s.status(), s.status(), !s.status().startsWith("error"));
    }
    return s;
  }

  void delete(String id) {
    snapshots.remove(id);
  }

  /** Sets a snapshot's status, as Cinder's volume service would. */
  Snapshot status(String id, String status) {
    Snapshot s = existing(id);
    Snapshot changed =
        new Snapshot(
            s.id(), s.name(), s.volumeId(), status, s.sizeGib(), s.metadata(), s.createdAt());
    snapshots.put(id, changed);
    return changed;
  }

  /** Merges {@code entries} into the snapshot's metadata. */
  void metadata(String id, Map<String, String> entries) {
    Snapshot s = existing(id);
    Map<String, String> md = new LinkedHashMap<>(s.metadata());
    md.putAll(entries);
    snapshots.put(
        id,
        new Snapshot(s.id(), s.name(), s.volumeId(), s.status(), s.sizeGib(), md, s.createdAt()));
  }

  /** What stops the volume's deletion: its snapshots. */
  boolean any(String volumeId) {
    return snapshots.values().stream().anyMatch(s -> s.volumeId().equals(volumeId));
  }

  Map<String, Snapshot> all() {
    return Map.copyOf(snapshots);
  }

  Snapshot existing(String id) {
    Snapshot s = snapshots.get(id);
    if (s == null) {
      throw new CinderException.NotFound("Snapshot " + id + " could not be found.", "req-fake");
    }
    return s;
  }
}
