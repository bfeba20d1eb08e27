package org.standalonecinder.provisioner.snapshot;

import java.time.Clock;
import java.util.Set;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.controller.InFlight;
import org.standalonecinder.provisioner.provision.Names;

/**
 * What must hold before a dynamic content's snapshot or backup is asked of Cinder: its volume is
 * one this cluster's provisioner made, Cinder is not busy with it, and, for a backup, there is room
 * among the backups in flight.
 *
 * <p>Only the provisioner's own volumes are taken: a content names its volume by id, and one made
 * by the snapshot-controller for another driver's PV (whose handle may be any Cinder volume's id)
 * or by anyone who may write contents must not reach the rest of the project.
 *
 * <p>Cinder refuses a snapshot or backup of a volume it is busy with (400 "Invalid volume": being
 * backed up, extended, attached); a large backup keeps a volume busy for an hour. That is a wait,
 * not a failure: asked anyway, the loop's retries would be spent on refusals for as long as it
 * lasts. A volume in an error state is a failure, retried with the backoff.
 *
 * <p>Backups are bounded ({@link BackupLimits}): a backup reads its whole volume, and one
 * namespace's burst must not take cinder-backup from every other's.
 */
final class TakeGate {

  /** A failure, a wait (why), or neither: ask Cinder now. */
  record State(String failure, boolean isFinal, String busy) {
    static final State FREE = new State(null, false, null);
  }

  private static final Set<String> TAKEABLE = Set.of("available", "in-use");

  private final CinderClient cinder;
  private final String clusterId;
  private final InFlight backups;

  TakeGate(CinderClient cinder, String clusterId, BackupLimits limits, Clock clock) {
    this.cinder = cinder;
    this.clusterId = clusterId;
    this.backups = new InFlight(limits.inFlight(), clock);
  }

  /**
   * Whether the content's snapshot or backup may be asked now; a backup with room is counted among
   * those in flight from here.
   */
  State check(Content c, Copy.Kind kind) {
    State volume = volume(c.volumeHandle(), kind);
    if (volume.failure() != null || volume.busy() != null || kind != Copy.Kind.BACKUP) {
      return volume;
    }
    String full = backups.reserve(c.name(), c.snapshotNamespace());
    return full == null
        ? State.FREE
        : new State(
            null, false, "waits to ask Cinder for its backup: " + full + "; asked once one ends");
  }

  /**
   * What Cinder says of a content's snapshot or backup: a backup being taken counts among those in
   * flight (also one found under way after a restart or a change of leader), one that has ended
   * does not.
   */
  void taking(Content c, Copy s, boolean ended) {
    if (s.kind() != Copy.Kind.BACKUP || !c.dynamic()) {
      return;
    }
    if (ended) {
      backups.release(c.name());
    } else {
      backups.hold(c.name(), c.snapshotNamespace());
    }
  }

  /** The content's backup was not asked after all, or the content is being deleted. */
  void dropped(Content c) {
    backups.release(c.name());
  }

  /** Reads the volume {@code id} from Cinder and says whether {@code kind} may be taken of it. */
  private State volume(String id, Copy.Kind kind) {
    Volume v = cinder.getVolume(id).orElse(null);
    if (v == null) {
      return new State("Cinder has no volume " + id, true, null);
    }
    if (!clusterId.equals(v.metadata().get(Names.META_CLUSTER))) {
      return new State(
          "volume "
              + id
              + " was not made by this cluster's provisioner; only its own volumes are snapshotted",
          true,
          null);
    }
    if (TAKEABLE.contains(v.status())) {
      return State.FREE;
    }
    String asked = kind == Copy.Kind.BACKUP ? "a backup" : "a snapshot";
    if (v.status().startsWith("error")) {
      return new State(
          "volume "
              + id
              + " is "
              + v.status()
              + "; Cinder takes "
              + asked
              + " only of an available or in-use volume",
          false,
          null);
    }
    return new State(
        null,
        false,
        "waiting for volume "
            + id
            + " to be available or in use (it is "
            + v.status()
            + ") before Cinder can take "
            + asked
            + " of it");
  }
}
