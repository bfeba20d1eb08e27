package org.standalonecinder.provisioner.snapshot;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.controller.InFlight;
import org.standalonecinder.provisioner.controller.Pace;
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
 * <p>Backups are bounded ({@link SnapshotLimits}): a backup reads its whole volume, and one
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
  private final SnapshotController.Timing timing;
  private final ContentSync.Underway underway;
  private final Clock clock;
  private final Pace pace;

  TakeGate(
      CinderClient cinder,
      String clusterId,
      SnapshotController.Timing timing,
      ContentSync.Underway underway,
      Clock clock) {
    this.cinder = cinder;
    this.clusterId = clusterId;
    this.backups = new InFlight(timing.backups().inFlight(), clock);
    this.timing = timing;
    this.underway = underway;
    this.clock = clock;
    this.pace = new Pace(clock);
  }

  /**
   * The content waits on the pace (its volume busy, or no room for its backup), told once it lasts;
   * nothing is asked of Cinder meanwhile. Timed from the content's making, which a restart keeps: a
   * volume busy past the deadline is told as a warning (a stuck attachment or maintenance is the
   * admin's to clear). A wait for room is not: the room comes when others' backups end.
   */
  Duration await(GenericKubernetesResource raw, Content c, String why, boolean room) {
    Instant made = madeAt(raw);
    Duration age =
        made != null && made.isBefore(clock.instant())
            ? Duration.between(made, clock.instant())
            : pace.seen(c.name());
    underway.tell(raw, why, age, !room && age.compareTo(timing.stuckAfter()) >= 0);
    Duration next = Pace.nextLook(age, timing.firstLook());
    return room && next.compareTo(WAIT_FOR_ROOM) < 0 ? WAIT_FOR_ROOM : next;
  }

  private static Instant madeAt(GenericKubernetesResource raw) {
    try {
      String t = raw.getMetadata() == null ? null : raw.getMetadata().getCreationTimestamp();
      return t == null ? null : Instant.parse(t);
    } catch (java.time.format.DateTimeParseException e) {
      return null;
    }
  }

  /** The shortest time between two looks at a content that waits for room for its backup. */
  static final Duration WAIT_FOR_ROOM = Duration.ofSeconds(5);

  /** The content waits no more: its snapshot or backup is asked now. */
  void passed(Content c) {
    pace.done(c.name());
  }

  /**
   * Room for the content's backup among those in flight, counted from here (or renewed); or why it
   * waits. Asked before anything of Cinder, so that a namespace's thousand waiting backups cost
   * Cinder nothing.
   */
  String room(Content c) {
    String full = backups.reserve(c.name(), c.snapshotNamespace());
    return full == null
        ? null
        : "waits to ask Cinder for its backup: "
            + full
            + "; asked at a look after one of them has ended";
  }

  /** Whether the content's snapshot or backup may be asked of its volume now. */
  State check(Content c, Copy.Kind kind) {
    return volume(c.volumeHandle(), kind);
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
