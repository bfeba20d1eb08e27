package org.standalonecinder.provisioner.provision;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.slf4j.MDC;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.CinderExport;
import org.standalonecinder.provisioner.cinder.Rollback;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.controller.FairPool;
import org.standalonecinder.provisioner.controller.Provisioner.DeleteOutcome;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.mapping.MappedVolume;
import org.standalonecinder.provisioner.mapping.RbdOptions;
import org.standalonecinder.provisioner.mapping.VolumeMappers;

/**
 * Turns a claim into a Cinder volume exported to the cluster and the PersistentVolume that
 * describes it, and back.
 *
 * <p>Provisioning is idempotent: the volume's name and metadata derive from the claim's UID, an
 * existing volume is looked up before one is created and reused (a different size is an error), and
 * a reused volume left attached by a crashed attempt is detached first. Whatever fails after the
 * volume exists undoes the completed steps in reverse order (export, volume, Secret) and reports
 * the original error.
 *
 * <p>Without Nova, the volume is attached to "the cluster": one connector with the cluster-wide
 * initiator name, through the attachments API when Cinder has it (3.44: create with a connector and
 * complete), else os-reserve and os-initialize_connection.
 */
public final class VolumeProvisioner {

  private final CinderClient cinder;
  private final SecretStore secrets;
  private final VolumeMappers mappers;
  private final ProvisionerSettings settings;
  private final Backoff backoff;
  private final Volumes volumes;
  private final AuthSecrets auth;
  private final RbdChoices rbd;
  private final Leftovers leftovers;
  private final CinderExport exports;
  private final ClaimExport exported;
  private final Release release;
  private final Duration schedulingGrace;
  private final CopyLimits copyLimits;
  private final FairPool pool;
  private final Exporting exporting;

  /**
   * The claims whose volume this process has asked Cinder for (looked up or made), or was told to
   * look for, until their PV exists or what they left is deleted. A claim deleted without a PV
   * costs Cinder a look-up only if it is here: a tenant's thousand claims refused before Cinder was
   * asked cost it nothing when they go. What a stopped process made, the housekeeping's sweep finds
   * ({@link #unfinished}), and it then names the claim here.
   */
  private final java.util.Set<String> asked = java.util.concurrent.ConcurrentHashMap.newKeySet();

  public VolumeProvisioner(
      CinderClient cinder,
      SecretStore secrets,
      VolumeMappers mappers,
      ProvisionerSettings settings,
      Backoff backoff) {
    this(
        cinder,
        secrets,
        mappers,
        settings,
        backoff,
        Volumes.SCHEDULING_GRACE,
        CopyLimits.DEFAULT,
        FairPool.inline());
  }

  private VolumeProvisioner(
      CinderClient cinder,
      SecretStore secrets,
      VolumeMappers mappers,
      ProvisionerSettings settings,
      Backoff backoff,
      Duration schedulingGrace,
      CopyLimits copyLimits,
      FairPool pool) {
    this.pool = pool;
    this.exporting = new Exporting(pool, java.time.Clock.systemUTC());
    this.cinder = cinder;
    this.secrets = secrets;
    this.mappers = mappers;
    this.settings = settings;
    this.backoff = backoff;
    this.schedulingGrace = schedulingGrace;
    this.copyLimits = copyLimits;
    this.volumes =
        new Volumes(
            cinder,
            settings,
            backoff,
            schedulingGrace,
            new org.standalonecinder.provisioner.controller.InFlight(
                copyLimits.inFlight(), java.time.Clock.systemUTC()),
            settings::connector);
    this.auth = new AuthSecrets(secrets, settings);
    this.rbd = new RbdChoices(secrets, settings);
    this.leftovers = new Leftovers(cinder, secrets, settings, volumes);
    this.exports = new CinderExport(cinder, step -> {});
    this.exported = new ClaimExport(cinder, exports, mappers, settings);
    this.release = new Release(cinder, settings, volumes, auth, exports);
  }

  /**
   * The same provisioner with another grace for volumes no scheduler took (60 s by default); the
   * reliability suite shortens it so that its case does not take a minute.
   */
  public VolumeProvisioner withSchedulingGrace(Duration grace) {
    return new VolumeProvisioner(
        cinder, secrets, mappers, settings, backoff, grace, copyLimits, pool);
  }

  /**
   * The same provisioner with other bounds on the copies (clones, restores) Cinder makes for claims
   * at once ({@link CopyLimits#DEFAULT} unless told). A claim past them waits in the queue, told
   * why, without asking Cinder.
   */
  public VolumeProvisioner withCopyLimits(CopyLimits limits) {
    return new VolumeProvisioner(
        cinder, secrets, mappers, settings, backoff, schedulingGrace, limits, pool);
  }

  /**
   * Claims' Cinder calls run in the background at once: twice the Cinder client's bound (8), so one
   * namespace (at most half) can keep the client busy and another's wait at most one call's time.
   */
  public static final int BACKGROUND_THREADS = 16;

  /**
   * The same provisioner exporting claims' volumes on {@code threads} threads of its own, off the
   * claim loop's workers (by default each export runs on the worker that starts it): a claim's next
   * look takes the export's outcome once it ends ({@link Background}).
   */
  public VolumeProvisioner withBackgroundThreads(int threads) {
    return with(FairPool.ofThreads(threads, "claims-cinder"));
  }

  /** The same provisioner running its background calls on {@code executor} (for tests). */
  VolumeProvisioner withBackground(java.util.concurrent.Executor executor) {
    return with(new FairPool(executor, 2));
  }

  private VolumeProvisioner with(FairPool p) {
    return new VolumeProvisioner(
        cinder, secrets, mappers, settings, backoff, schedulingGrace, copyLimits, p);
  }

  /**
   * Where claims' Cinder work runs off the loop's workers ({@link #withBackgroundThreads}): the
   * claim loop runs its steps there too, so that one fair share bounds both.
   */
  public FairPool pool() {
    return pool;
  }

  /** This replica stopped acting: work not yet taken up is dropped ({@link Background#drop}). */
  public void paused() {
    exporting.drop();
    volumes.paused();
  }

  /**
   * Counts the claim's copy (a clone or a restore) among those in flight, or renews it: asked at
   * each look before anything else is done for the copy.
   *
   * @throws StillMaking (with no volume) when the claim must wait for room, told why
   */
  public void reserveCopy(PersistentVolumeClaim claim) {
    if (exporting.has(claim.getMetadata().getUid())) {
      return; // its copy is made and counts no more: Cinder exports the volume
    }
    volumes.reserveCopy(claim);
  }

  /**
   * Whether the claim's copy counts among those in flight: Cinder may be filling its volume, so
   * what the copy reads (a clone's source) must stay.
   */
  public boolean copyInFlight(String claimUid) {
    return volumes.copyInFlight(claimUid);
  }

  /** What grows this provisioner's volumes, on the same Cinder and with the same waits. */
  public VolumeExpander expander() {
    return new VolumeExpander(cinder);
  }

  /**
   * Creates (or finds) the claim's volume, exports it and returns the PV to create; the one way in.
   * The PV is not created here: the caller creates it and calls {@link #delete} if it cannot.
   *
   * <p>A clone's volume is a Cinder clone of {@code source} (resolved and checked by the clone
   * resolver) in the source's zone unless the class names one, with the class's type or else the
   * source's; a restore's is made from its snapshot or backup. For a claim the scheduler selected a
   * node for ({@code volume.kubernetes.io/selected-node}), whose labels are {@code nodeLabels}, the
   * volume is made in the node's zone and its PV is for that zone's nodes ({@link Placement}).
   *
   * <p>The caller's view of the PVs may lag behind the API server (an informer's cache): when
   * Cinder has the claim's volume exported already, {@code pvExists} is asked before anything is
   * done to it, since a volume a PV holds must not be detached, exported again or rolled back.
   *
   * @param source what fills the volume, or null for a blank one
   * @param nodeLabels the selected node's labels, empty when none was selected
   * @param pvExists whether the named PV exists in the API server now
   * @throws AlreadyProvisioned when it does: nothing was done
   * @throws StillMaking when Cinder is still making or filling the volume: nothing waits for it
   * @throws ProvisioningException with everything done so far undone
   */
  public PersistentVolume provision(
      PersistentVolumeClaim claim,
      StorageClass storageClass,
      VolumeSource source,
      Map<String, String> nodeLabels,
      Predicate<String> pvExists) {
    ClaimRequest req = ClaimRequest.of(claim, storageClass);
    Placement placement =
        Placement.forClaim(claim, storageClass, req, source, nodeLabels, settings.topology());
    req.requireRoomFor(source);
    String uid = claim.getMetadata().getUid();
    String pvName = Names.pvName(uid);
    RbdOptions rbdOptions = rbd.of(req.params(), storageClass);
    Rollback rollback = new Rollback();
    try {
      MDC.put("pv", pvName);
      asked.add(uid);
      Exporting.Exported ended =
          exportOf(req, claim, pvName, source, placement, rollback, pvExists);
      rollback = ended.rollback();
      Volume volume = ended.volume();
      CinderExport.Exported export = ended.export();
      MappedVolume mapped = exported.map(export, req, pvName, rbdOptions);
      auth.put(mapped, pvName, rollback);
      PersistentVolume pv =
          PvTemplate.of(
              settings,
              claim,
              storageClass,
              req,
              pvName,
              volume,
              export.attachmentId() == null ? Names.RESERVED : export.attachmentId(),
              mapped,
              placement);
      if (source != null) {
        String said = source.restore() ? Names.ANN_RESTORED_FROM : Names.ANN_CLONE_OF;
        pv.getMetadata().getAnnotations().put(said, source.claim().toString());
      }
      return pv;
    } catch (AlreadyProvisioned | StillMaking e) {
      // nothing to undo: nothing was done, or the volume is the claim's while Cinder fills it
      throw e;
    } catch (RuntimeException e) {
      rollback.run(e);
      throw Failures.of(e);
    }
  }

  /**
   * The claim's volume exported: by an earlier look's export that has ended (else this throws
   * {@link StillMaking}), or by one started now for the volume found or made.
   */
  private Exporting.Exported exportOf(
      ClaimRequest req,
      PersistentVolumeClaim claim,
      String pvName,
      VolumeSource source,
      Placement placement,
      Rollback rollback,
      Predicate<String> pvExists) {
    String uid = claim.getMetadata().getUid();
    Exporting.Exported ended = exporting.finished(uid).orElse(null);
    if (ended != null) {
      try {
        placement.requireZoneOf(ended.volume()); // the scheduler may have chosen again meanwhile
      } catch (ProvisioningException elsewhere) {
        ended.rollback().run(elsewhere);
        throw elsewhere;
      }
      return ended;
    }
    Volume made = volumes.findOrCreate(req, claim, pvName, source, placement, rollback, pvExists);
    MDC.put("volume", made.id());
    req.requireMultiattach(made);
    return exporting.start(
        uid, claim.getMetadata().getNamespace(), made, rollback, r -> exported.export(made, r));
  }

  /**
   * Marks the PV's volume {@link Names#STATE_PROVISIONED}: it is the PV's from now on, and no
   * orphan sweep may delete it, whatever becomes of the PV (an admin may delete a retained one and
   * keep the data). Called once the PV exists; a volume that is already gone needs nothing.
   */
  public void handOver(PersistentVolume pv) {
    // The PV exists: from now on it, not the pending mark, keeps its shared Secret.
    auth.settle(pv.getMetadata().getName());
    String volumeId = pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    try {
      cinder.updateVolumeMetadata(volumeId, Map.of(Names.META_STATE, Names.STATE_PROVISIONED));
    } catch (CinderException.NotFound gone) {
      // nothing left to protect
    } catch (RuntimeException e) {
      throw Failures.of(e);
    }
  }

  /**
   * Withdraws the export, deletes the volume and the PV's auth Secret, in that order. Each step
   * treats "already gone" as done, so a delete that failed half-way can simply run again.
   *
   * @throws ProvisioningException (not final) when Cinder will not delete the volume yet
   */
  public DeleteOutcome delete(PersistentVolume pv) {
    return release.delete(pv);
  }

  /**
   * Deletes what provisioning left for a claim that is gone without a PV: volumes carrying the
   * claim's UID and this cluster's id that were never handed to a PV (detached first), and the
   * claim's CHAP Secret. A volume that was handed to its PV is left alone, with its Secret: its PV
   * is gone only if an admin deleted a retained one, and its data is the admin's. Nothing waits for
   * Cinder: call again while the answer is not 0.
   *
   * @return how many of the claim's volumes Cinder is still deleting
   */
  public int deleteOrphans(String claimUid) {
    // A create or export that runs makes or changes what is looked for: looked for once it ends.
    if (volumes.createRunning(claimUid) | exporting.cancel(claimUid)) {
      return 1;
    }
    int going = leftovers.deleteOrphans(claimUid);
    volumes.copyEnded(claimUid);
    if (going == 0) {
      asked.remove(claimUid);
    }
    return going;
  }

  /**
   * Whether Cinder may hold a volume of the claim that no PV holds, as far as this process knows:
   * it asked Cinder for the claim's volume, or was told to look ({@link #lookFor}), and neither its
   * PV was made nor {@link #deleteOrphans} ran since.
   */
  public boolean mayHaveLeft(String claimUid) {
    return asked.contains(claimUid);
  }

  /**
   * Cinder may hold a volume of the claim that this process did not make (the sweep found one, or
   * another process may have restored into one under another identity): its deletion looks.
   */
  public void lookFor(String claimUid) {
    asked.add(claimUid);
  }

  /**
   * The claim's PV exists: from now on its release, not the claim's deletion, deletes the volume.
   */
  public void settled(String claimUid) {
    asked.remove(claimUid);
  }

  /**
   * Deletes the shared Secrets of ours that no PV refers to: those a crash left between their put
   * and their PV's creation. Run with the orphan sweep.
   *
   * @return how many were deleted
   */
  public int sweepSharedSecrets() {
    return auth.sweepSharedSecrets();
  }

  /**
   * The volumes of this cluster still {@link Names#STATE_PROVISIONING}: after a restart, the only
   * trace of a provisioning that failed or was cut short. Volumes of other clusters are never
   * listed, nor volumes that lack the claim's identity.
   */
  public List<Unfinished> unfinished() {
    return leftovers.unfinished();
  }

  /** For tests and the controller: how long waits for Cinder may take. */
  public static Backoff defaultBackoff() {
    return Backoff.DEFAULT.withDeadline(Duration.ofMinutes(5));
  }
}
