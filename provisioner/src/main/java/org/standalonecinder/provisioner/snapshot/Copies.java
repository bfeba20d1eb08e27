package org.standalonecinder.provisioner.snapshot;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.standalonecinder.provisioner.cinder.Backup;
import org.standalonecinder.provisioner.cinder.BackupSpec;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.Microversion;
import org.standalonecinder.provisioner.cinder.Snapshot;
import org.standalonecinder.provisioner.cinder.SnapshotSpec;

/**
 * Cinder's snapshots and backups behind one face, so that taking, following, deleting, sweeping and
 * restoring are written once for both. A handle is a bare Cinder id either way (as cinder-csi
 * writes it, so a content imported from it reads the same): which of the two it names is asked of
 * Cinder.
 */
final class Copies {

  private final CinderClient cinder;

  Copies(CinderClient cinder) {
    this.cinder = cinder;
  }

  /** The snapshot or backup {@code id} names, or empty when Cinder has neither. */
  Optional<Copy> get(String id) {
    return get(id, List.of(Copy.Kind.SNAPSHOT));
  }

  /**
   * As {@link #get(String)}, asked in the kinds {@code first} before the others: where the class
   * says which, following a backup costs one GET a poll, not a 404 first.
   */
  Optional<Copy> get(String id, List<Copy.Kind> first) {
    List<Copy.Kind> order = new ArrayList<>(first);
    for (Copy.Kind k : Copy.Kind.values()) {
      if (!order.contains(k)) {
        order.add(k);
      }
    }
    for (Copy.Kind k : order) {
      Optional<Copy> c = get(k, id);
      if (c.isPresent()) {
        return c;
      }
    }
    return Optional.empty();
  }

  Optional<Copy> get(Copy.Kind kind, String id) {
    return kind == Copy.Kind.SNAPSHOT
        ? cinder.getSnapshot(id).map(Copies::of)
        : cinder.getBackup(id).map(Copies::of);
  }

  /**
   * Those of {@code kinds} named {@code name} (when not null) whose metadata holds {@code meta}.
   */
  List<Copy> find(List<Copy.Kind> kinds, String name, Map<String, String> meta) {
    List<Copy> found = new ArrayList<>();
    for (Copy.Kind k : kinds) {
      if (k == Copy.Kind.SNAPSHOT) {
        cinder.findSnapshots(name, meta).forEach(s -> found.add(of(s)));
      } else {
        cinder.findBackups(name, meta).forEach(b -> found.add(of(b)));
      }
    }
    return found;
  }

  /**
   * Starts making one.
   *
   * @throws CinderException.Unsupported for a backup where Cinder keeps no backup metadata (below
   *     3.43): the provisioner would not find it again, and a retry would make a second
   */
  Copy create(
      Copy.Kind kind, String name, String volumeId, String description, Map<String, String> meta) {
    if (kind == Copy.Kind.SNAPSHOT) {
      return of(cinder.createSnapshot(new SnapshotSpec(name, volumeId, description, meta)));
    }
    if (!cinder.apiVersions().used().atLeast(Microversion.BACKUP_METADATA)) {
      throw new CinderException.Unsupported(
          "this Cinder speaks microversion "
              + cinder.apiVersions().used()
              + "; backups need "
              + Microversion.BACKUP_METADATA
              + " (their metadata, by which the provisioner finds its own)",
          0,
          null);
    }
    return of(cinder.createBackup(new BackupSpec(name, volumeId, description, meta)));
  }

  /** Sets these entries of its metadata, keeping the others. */
  void setMetadata(Copy c, Map<String, String> entries) {
    if (c.kind() == Copy.Kind.SNAPSHOT) {
      cinder.updateSnapshotMetadata(c.id(), entries);
    } else {
      cinder.updateBackupMetadata(c.id(), entries);
    }
  }

  void delete(Copy c) {
    if (c.kind() == Copy.Kind.SNAPSHOT) {
      cinder.deleteSnapshot(c.id());
    } else {
      cinder.deleteBackup(c.id());
    }
  }

  static Copy of(Snapshot s) {
    return new Copy(
        Copy.Kind.SNAPSHOT,
        s.id(),
        s.volumeId(),
        s.status(),
        s.sizeGib(),
        s.createdAt(),
        s.metadata(),
        null);
  }

  static Copy of(Backup b) {
    return new Copy(
        Copy.Kind.BACKUP,
        b.id(),
        b.volumeId(),
        b.status(),
        b.sizeGib(),
        b.createdAt(),
        b.metadata(),
        b.failReason());
  }
}
