package org.standalonecinder.provisioner.provision;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.controller.Pace;
import org.standalonecinder.provisioner.controller.ProvisionResult;
import org.standalonecinder.provisioner.controller.ProvisioningException;

/**
 * Volumes Cinder is still making, and what the claim's loop is told of them: no worker waits for
 * Cinder to fill a volume (a clone or a restore may take hours), so each look at the claim finds
 * the volume by its name, sees how far Cinder has got, and says when to look again.
 *
 * <p>What survives a restart is Cinder's own record: the volume, its status and its {@code
 * created_at}. This process remembers only when it first saw each volume being made (a bound on a
 * skewed Cinder clock) and which ones a backend has taken (asked once, see {@link #look}).
 */
final class BeingMade {

  /** The statuses of a volume that Cinder is still making or filling. */
  static final Set<String> STATUSES = Set.of("creating", "downloading", "restoring-backup");

  private static final Logger log = LoggerFactory.getLogger(BeingMade.class);

  private final CinderClient cinder;
  private final Duration schedulingGrace;
  private final Clock clock;

  /**
   * The volumes seen being made: when this process first saw each, and whether a backend has it. An
   * entry goes when the volume is seen made, or is deleted: it lives as long as a provisioning.
   */
  private final Map<String, Seen> seen = new ConcurrentHashMap<>();

  private static final class Seen {
    final Instant first;
    volatile Instant last;
    volatile boolean scheduled;

    Seen(Instant first) {
      this.first = first;
      this.last = first;
    }
  }

  BeingMade(CinderClient cinder, Duration schedulingGrace, Clock clock) {
    this.cinder = cinder;
    this.schedulingGrace = schedulingGrace;
    this.clock = clock;
  }

  /** Whether Cinder is still making {@code v}. */
  static boolean isBeingMade(Volume v) {
    return STATUSES.contains(v.status());
  }

  /** {@code v} is made (or gone): nothing more is remembered of it. */
  void done(String volumeId) {
    seen.remove(volumeId);
  }

  /**
   * Looks at a volume Cinder is making and says so, with when to look again. A volume still {@code
   * creating} past the scheduling grace is asked, once, by a delete whether a scheduler ever took
   * it: Cinder deletes at once a volume that has no backend host yet, and refuses (400) one that a
   * backend is creating (the host attribute that would answer is admin-only). A scheduler that was
   * only down finds the volume gone when it comes back and drops its request.
   *
   * @param filling what fills it, for the message ({@link #filling})
   * @return the claim's progress, to be thrown to the loop
   * @throws ProvisioningException (not final) when no scheduler ever took it: it was deleted, and
   *     the next attempt makes a new one
   */
  StillMaking look(Volume v, String filling) {
    Instant now = clock.instant();
    seen.values().removeIf(old -> old.last.isBefore(now.minus(Pace.FORGOTTEN_AFTER)));
    Seen s = seen.computeIfAbsent(v.id(), id -> new Seen(now));
    s.last = now;
    Duration locally = Duration.between(s.first, now);
    Duration byCinder =
        v.createdAt() != null && v.createdAt().isBefore(now)
            ? Duration.between(v.createdAt(), now)
            : locally;
    // Old by both counts: a Cinder clock behind ours must not make a volume a moment old look
    // unscheduled (nor slow its looks), and one ahead of ours counts as no record at all.
    Duration age = Pace.shorter(byCinder, locally);
    if (v.status().equals("creating") && !s.scheduled && age.compareTo(schedulingGrace) >= 0) {
      try {
        cinder.deleteVolume(v.id());
      } catch (CinderException.BadRequest beingCreated) {
        s.scheduled = true;
        return still(v, filling, byCinder, age);
      }
      seen.remove(v.id());
      log.warn(
          "Cinder never scheduled volume {}: creating for {} s with no backend; deleted, a new one"
              + " is made",
          v.id(),
          age.toSeconds());
      throw new ProvisioningException(
          "Cinder never scheduled volume "
              + v.id()
              + ": it stayed creating for "
              + age.toSeconds()
              + " s with no backend (Cinder's API or scheduler stopped before taking it); it was"
              + " deleted and a new one is made",
          false,
          null);
    }
    return still(v, filling, byCinder, age);
  }

  /**
   * @param soFar how long Cinder has been at it, by its record (what the claim is told)
   * @param age the shorter of that and this process' own count (what the next look is timed by: a
   *     Cinder clock behind ours must not slow the looks at a new volume)
   */
  private StillMaking still(Volume v, String filling, Duration soFar, Duration age) {
    return new StillMaking(
        v.id(),
        "Cinder is "
            + filling
            + " volume "
            + v.id()
            + " (status "
            + v.status()
            + "); "
            + Pace.soFar(soFar),
        new ProvisionResult.Progress(soFar, nextLook(age, seen.size())));
  }

  /**
   * The share of Cinder's API one volume's looks may take: with {@code n} volumes being made, each
   * is looked at no more often than every {@code n} × this, so a burst's looks stay at about 40 a
   * second however many wait (each look is a listing, and Cinder's API makes the volumes too).
   */
  static final Duration PER_VOLUME = Duration.ofMillis(25);

  /**
   * When to look again at a volume made for {@code age} while {@code inFlight} are being made: on
   * the {@link Pace}, and no sooner than the crowd allows ({@link #PER_VOLUME}).
   */
  static Duration nextLook(Duration age, int inFlight) {
    Duration paced = Pace.nextLook(age);
    Duration crowd = PER_VOLUME.multipliedBy(inFlight);
    if (crowd.compareTo(Pace.LONGEST_LOOK) > 0) {
      crowd = Pace.LONGEST_LOOK;
    }
    return paced.compareTo(crowd) < 0 ? crowd : paced;
  }

  /**
   * What Cinder is doing to make a volume filled from {@code source}, as the message says it:
   * {@code copying snapshot ... into}.
   */
  static String filling(VolumeSource source) {
    if (source == null) {
      return "creating";
    }
    if (source instanceof VolumeSource.FromSnapshot s) {
      return "copying snapshot " + s.snapshotId() + " (VolumeSnapshot " + s.claim() + ") into";
    }
    if (source instanceof VolumeSource.FromBackup b) {
      return "restoring backup " + b.backupId() + " (VolumeSnapshot " + b.claim() + ") into";
    }
    return "copying volume " + source.volumeId() + " (claim " + source.claim() + ") into";
  }

  /** How long since {@code timestamp} (a Kubernetes one), or zero when it says nothing usable. */
  static Duration since(String timestamp, Clock clock) {
    if (timestamp == null) {
      return Duration.ZERO;
    }
    try {
      Duration d = Duration.between(Instant.parse(timestamp), clock.instant());
      return d.isNegative() ? Duration.ZERO : d;
    } catch (java.time.format.DateTimeParseException e) {
      return Duration.ZERO;
    }
  }
}
