package org.standalonecinder.provisioner.provision;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.provisioner.cinder.Attachment;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.Connector;
import org.standalonecinder.provisioner.cinder.Rollback;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.cinder.VolumeSpec;
import org.standalonecinder.provisioner.controller.FairPool;
import org.standalonecinder.provisioner.controller.InFlight;
import org.standalonecinder.provisioner.controller.Pace;
import org.standalonecinder.provisioner.controller.ProvisionResult;
import org.standalonecinder.provisioner.controller.ProvisioningException;

/**
 * The claim's Cinder volume: found by the claim's identity or created, and brought to {@code
 * available} whatever an earlier attempt left (still creating, reserved, attached, in the wrong
 * zone). Every step is safe to repeat.
 */
final class Volumes {

  private static final Set<String> AVAILABLE = Set.of("available");

  /** Every status a reserved volume moves to while its reservation is carried on or undone. */
  private static final Set<String> NOT_RESERVED =
      Set.of("available", "attaching", "in-use", "detaching");

  /**
   * How long a volume must stay reserved with no attachment to count as left so. A reservation's
   * two statements run within one API request, milliseconds apart; a request still running after
   * this long is not one the API will finish.
   */
  static final Duration RESERVATION_GRACE = Duration.ofSeconds(15);

  /**
   * How long a new volume may stay {@code creating} before it is asked whether a scheduler ever
   * took it ({@link BeingMade#look}). The scheduler picks a backend within a second; a volume
   * without one after this long was most likely never cast to the scheduler (its API stopped
   * between the volume's row and the cast), and then it would stay {@code creating} for good.
   */
  static final Duration SCHEDULING_GRACE = Duration.ofSeconds(60);

  private static final Logger log = LoggerFactory.getLogger(Volumes.class);

  private final CinderClient cinder;
  private final ProvisionerSettings settings;
  private final Backoff backoff;
  private final BeingMade beingMade;
  private final InFlight copies;
  private final java.time.Clock clock = java.time.Clock.systemUTC();

  /** The shortest time between two looks at a claim that waits for room for its copy. */
  static final Duration WAIT_FOR_ROOM = Duration.ofSeconds(5);

  private final java.util.function.Supplier<Connector> connector;

  /**
   * Creates asked and not yet taken up. They run on the worker that asks (an inline pool): a claim
   * deleted while its create ran elsewhere would find no volume to delete and leak the one the
   * create then made; off the workers they need the deleted claim's path to wait for them first.
   */
  private final Background<Volume> creating;

  Volumes(
      CinderClient cinder,
      ProvisionerSettings settings,
      Backoff backoff,
      Duration schedulingGrace,
      InFlight copies,
      java.util.function.Supplier<Connector> connector) {
    this.creating = Creates.background(FairPool.inline(), clock);
    this.cinder = cinder;
    this.settings = settings;
    this.backoff = backoff;
    this.beingMade = new BeingMade(cinder, schedulingGrace, clock);
    this.copies = copies;
    this.connector = connector;
  }

  /**
   * The claim's volume, available: the one an earlier attempt made (checked, recovered), or a new
   * one; its delete is pushed on {@code rollback}.
   *
   * @throws AlreadyProvisioned when Cinder has the claim's volume and {@code pvExists} says its PV
   *     exists: nothing is done to a volume a PV holds
   * @throws StillMaking when Cinder is still making or filling it: the claim is looked at again
   *     later, and the volume stays the claim's meanwhile (nothing to roll back)
   */
  Volume findOrCreate(
      ClaimRequest req,
      PersistentVolumeClaim claim,
      String pvName,
      VolumeSource source,
      Placement placement,
      Rollback rollback,
      Predicate<String> pvExists) {
    boolean fromBackup = source instanceof VolumeSource.FromBackup;
    String uid = claim.getMetadata().getUid();
    Map<String, String> meta = NewVolume.metadata(claim, pvName, source, settings.clusterId());
    // A failure of a look keeps the claim's copy counted (Cinder may be filling its volume): made,
    // never made, or gone ends it, and so do looks that stop (InFlight.LEASE).
    // A create asked at an earlier look: taken once ended (else this throws StillMaking).
    Volume asked = creating.finished(uid).orElse(null);
    Volume found = asked != null ? asked : find(pvName, uid, source);
    Volume volume;
    if (found != null) {
      try {
        volume = reuse(found, req, pvName, placement, rollback, pvExists);
      } catch (AlreadyProvisioned made) {
        copies.release(uid);
        throw made;
      }
    } else {
      VolumeSpec spec = NewVolume.spec(req, claim, pvName, source, placement, meta);
      volume =
          creating.start(
              uid,
              claim.getMetadata().getNamespace(),
              pvName,
              () -> Creates.create(cinder, spec, placement),
              nothingMade -> copies.release(uid));
    }
    if (BeingMade.isBeingMade(volume)) {
      StillMaking making;
      try {
        making = beingMade.look(volume, BeingMade.filling(source));
      } catch (RuntimeException neverMade) {
        copies.release(uid);
        throw neverMade;
      }
      throw making;
    }
    copies.release(uid);
    beingMade.done(volume.id());
    String id = volume.id();
    rollback.push("delete volume " + id, () -> cinder.deleteVolume(id));
    Volume ready;
    try {
      ready = makeAvailable(volume);
    } catch (CinderException.NotFound gone) {
      // Cinder's 404 is final for a call, not for the claim: the next attempt makes a new volume
      String said = "Cinder volume " + id + " of this claim was deleted while it was made ready";
      throw new ProvisioningException(said + "; a new one is made", false, gone);
    }
    return fromBackup ? RestoredFromBackup.identityBack(cinder, ready, meta) : ready;
  }

  /**
   * Counts the claim's copy among those in flight (or renews it), or says it waits for room: asked
   * before anything else of a clone or a restore, so that a namespace's thousand waiting claims
   * cost Cinder and the API server nothing.
   *
   * @throws StillMaking (with no volume) when the claim must wait
   */
  void reserveCopy(PersistentVolumeClaim claim) {
    String full = copies.reserve(claim.getMetadata().getUid(), claim.getMetadata().getNamespace());
    if (full == null) {
      return;
    }
    Duration waited = BeingMade.since(claim.getMetadata().getCreationTimestamp(), clock);
    Duration after = Pace.nextLook(waited);
    throw new StillMaking(
        null,
        "waits to ask Cinder for its copy: " + full + "; asked once one of them is made",
        new ProvisionResult.Progress(
            waited, after.compareTo(WAIT_FOR_ROOM) < 0 ? WAIT_FOR_ROOM : after));
  }

  /** Whether the claim's copy counts among those in flight: Cinder may be filling its volume. */
  boolean copyInFlight(String claimUid) {
    return copies.counts(claimUid);
  }

  /**
   * The claim's volume in Cinder, or null: by its identity, or (restored from a backup) by its name
   * under the identity Cinder's restore gave it.
   */
  private Volume find(String pvName, String uid, VolumeSource source) {
    List<Volume> found = cinder.findVolumes(pvName, Names.identifying(uid, settings.clusterId()));
    if (found.isEmpty() && source instanceof VolumeSource.FromBackup b) {
      found = RestoredFromBackup.underAnotherIdentity(cinder, pvName, uid, b.backupId());
    }
    if (found.size() > 1) {
      throw new ProvisioningException(
          "Cinder has "
              + found.size()
              + " volumes named "
              + pvName
              + " for this claim ("
              + found.stream().map(Volume::id).toList()
              + "); delete the extra ones",
          true,
          null);
    }
    return found.isEmpty() ? null : found.get(0);
  }

  /** An earlier attempt's volume, checked against the claim as it is now. */
  private Volume reuse(
      Volume volume,
      ClaimRequest req,
      String pvName,
      Placement placement,
      Rollback rollback,
      Predicate<String> pvExists) {
    // A PV is made only after its volume's export: a volume available with no attachment, or still
    // being made, is no PV's, and costs the API server no question (every claim's volume is found
    // so once, at the look after Cinder made it).
    boolean exported =
        !volume.attachmentIds().isEmpty()
            || !(volume.status().equals("available") || BeingMade.isBeingMade(volume));
    if (exported && pvExists.test(pvName)) {
      throw new AlreadyProvisioned(pvName);
    }
    if (volume.status().equals("deleting")) {
      // an earlier attempt's rollback (or someone) is deleting it: waiting for it would end in
      // a 404, and a final one would leave the claim until the next resync
      throw new ProvisioningException(
          "volume "
              + volume.id()
              + " of this claim is being deleted (an earlier attempt's rollback); a new one is"
              + " made once it is gone",
          false,
          null);
    }
    if (volume.sizeGib() != req.sizeGib()) {
      throw ProvisioningException.invalid(
          "volume "
              + volume.id()
              + " of this claim exists with "
              + volume.sizeGib()
              + " GiB but the claim asks for "
              + req.sizeGib()
              + " GiB");
    }
    inItsZone(volume, placement, rollback);
    return volume;
  }

  /**
   * Whether an earlier attempt's volume is in the zone the claim needs now; one made for an earlier
   * choice of node (the scheduler chose again) is deleted and a new one made.
   */
  private void inItsZone(Volume volume, Placement placement, Rollback rollback) {
    String zone = placement.cinderZone();
    if (zone != null && !zone.equals(volume.availabilityZone())) {
      // made for an earlier choice of node (the scheduler chose again): in the wrong zone now
      String id = volume.id();
      boolean making = BeingMade.isBeingMade(volume);
      if (!making) {
        rollback.push("delete volume " + id, () -> cinder.deleteVolume(id));
        makeAvailable(volume);
      }
      throw new ProvisioningException(
          "volume "
              + id
              + " of this claim is in zone "
              + volume.availabilityZone()
              + " and the claim now needs zone "
              + zone
              + " ("
              + placement.from()
              + "); it is deleted"
              + (making ? " once Cinder has made it (status " + volume.status() + ")" : "")
              + " and a new one is made",
          false,
          null);
    }
  }

  /** The volume is made or gone: nothing is remembered of its making any more. */
  void made(String volumeId) {
    beingMade.done(volumeId);
  }

  /** The claim's copy is made or gone: it no longer counts among those in flight. */
  void copyEnded(String claimUid) {
    copies.release(claimUid);
  }

  /**
   * The claim is gone: its create is cancelled unless it runs (on another thread: the look that
   * runs it, which a deleted claim's path may meet).
   *
   * @return whether it runs: the volume it makes exists only once it ends
   */
  boolean createRunning(String claimUid) {
    return creating.cancel(claimUid);
  }

  /** This replica stopped acting ({@link Background#drop}). */
  void paused() {
    creating.drop();
  }

  /** Brings a new or reused volume to {@code available}, undoing a crashed attempt's export. */
  Volume makeAvailable(Volume v) {
    if (BeingMade.isBeingMade(v)) {
      // callers look at a volume being made without waiting (BeingMade): this is a slip
      throw new ProvisioningException(
          "volume " + v.id() + " is still being made (status " + v.status() + ")", false, null);
    }
    boolean detached = detachAll(v);
    if (!detached && v.status().equals("reserved")) {
      return releaseReservation(v);
    }
    if (!detached && v.status().equals("attaching")) {
      // os-reserve (+ initialize) of an older Cinder, or of a crashed attempt
      cinder.terminateConnection(v.id(), connector.get());
      cinder.unreserve(v.id());
    }
    return cinder.awaitVolumeStatus(v.id(), AVAILABLE, backoff);
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) < 0 ? a : b;
  }

  /**
   * Releases a volume that is {@code reserved} with no attachment. Cinder's attachment create sets
   * the volume {@code reserved} and then writes the attachment, in two statements: a cinder-api
   * killed between them leaves the volume so for good, and only os-reset_status brings it back
   * (os-unreserve wants {@code attaching}, a new attachment and a delete want {@code available}).
   * The reservation may also be live, the request of a failed attempt that the API is still
   * finishing, so the volume is reset only when it stays reserved with no attachment for {@link
   * #RESERVATION_GRACE}.
   */
  private Volume releaseReservation(Volume v) {
    Backoff grace = backoff.withDeadline(min(backoff.deadline(), RESERVATION_GRACE));
    try {
      Volume moved = cinder.awaitVolumeStatus(v.id(), NOT_RESERVED, grace);
      return makeAvailable(moved); // live after all: undo what it made like any other attempt's
    } catch (CinderException.UnexpectedState e) {
      if (!e.timedOut()) {
        throw e;
      }
    }
    List<Attachment> late = cinder.listAttachments(v.id());
    if (!late.isEmpty()) {
      late.forEach(a -> cinder.deleteAttachment(a.id()));
      return cinder.awaitVolumeStatus(v.id(), AVAILABLE, backoff);
    }
    try {
      cinder.resetToAvailable(v.id());
    } catch (CinderException.Forbidden e) {
      throw new ProvisioningException(
          "Cinder left volume "
              + v.id()
              + " reserved with no attachment (its API stopped while reserving it) and only an"
              + " admin may reset it: cinder reset-state --state available --attach-status detached "
              + v.id()
              + "; the claim is tried again",
          false,
          e);
    }
    log.warn(
        "Cinder left volume {} reserved with no attachment for {} s; its status was reset to"
            + " available",
        v.id(),
        grace.deadline().toSeconds());
    return cinder.awaitVolumeStatus(v.id(), AVAILABLE, backoff);
  }

  /**
   * Deletes every attachment of the volume. The volume's own list misses attachments that were
   * never completed, so Cinder's attachment list is asked too.
   *
   * @return whether there was any
   */
  boolean detachAll(Volume v) {
    java.util.Set<String> ids = new java.util.TreeSet<>(v.attachmentIds());
    cinder.listAttachments(v.id()).forEach(a -> ids.add(a.id()));
    ids.forEach(cinder::deleteAttachment);
    return !ids.isEmpty();
  }
}
