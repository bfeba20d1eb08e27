package org.standalonecinder.provisioner.plugin;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.clone.SourceProtection;
import org.standalonecinder.provisioner.controller.ClusterCache;
import org.standalonecinder.provisioner.controller.Pace;
import org.standalonecinder.provisioner.controller.Provisioner.Abandoned;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.controller.WorkKey;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;
import org.standalonecinder.provisioner.provision.Unfinished;
import org.standalonecinder.provisioner.provision.VolumeProvisioner;

/**
 * What a deleted claim or a stopped process left: a deleted claim's volumes and its clone source's
 * protection, this cluster's volumes never handed to a PV (found in Cinder after a restart), a
 * hand-over that failed, and shared auth Secrets no PV refers to.
 */
final class Housekeeping {

  private static final Logger LOG = LoggerFactory.getLogger(Housekeeping.class);

  private final KubernetesClient client;
  private final ClusterCache cache;
  private final VolumeProvisioner volumes;
  private final ProvisionerSettings settings;
  private final SourceProtection protection;

  /** PVs whose volume this process has marked handed over (so a retained PV asks Cinder once). */
  private final Set<String> handedOver = ConcurrentHashMap.newKeySet();

  /** Deleted claims whose volumes Cinder is deleting: when each was first seen so. */
  private final Pace orphans = new Pace(java.time.Clock.systemUTC());

  Housekeeping(
      KubernetesClient client,
      ClusterCache cache,
      VolumeProvisioner volumes,
      ProvisionerSettings settings,
      SourceProtection protection) {
    this.client = client;
    this.cache = cache;
    this.volumes = volumes;
    this.settings = settings;
    this.protection = protection;
  }

  /**
   * A retained PV: its volume must outlive it if an admin deletes it; a hand-over that failed when
   * the PV was made is repaired here, once.
   */
  void retained(PersistentVolume pv) {
    if (mine(pv) && !handedOver.contains(pv.getMetadata().getName())) {
      handOver(pv);
    }
  }

  /** The PV is gone: the memo holds only PVs that exist, so it stays as small as the cluster. */
  void forget(PersistentVolume pv) {
    handedOver.remove(pv.getMetadata().getName());
  }

  /**
   * Deletes what provisioning left for a claim gone without a PV: the volumes and the CHAP Secret
   * ({@link VolumeProvisioner#deleteOrphans}), then a clone's protection on its source, which a
   * copy Cinder is still making reads. Nothing is deleted while the PV or the claim still exists:
   * the cache may lag behind the API server, and a delete cannot be taken back.
   */
  Optional<java.time.Duration> abandoned(WorkKey.Claim claim, String claimUid) {
    // Never asked Cinder for (refused before, or another process's, whose volume the
    // housekeeping's sweep finds): nothing to look up, however many such claims go at once.
    if (volumes.mayHaveLeft(claimUid)) {
      String pvName = Names.pvName(claimUid);
      if (cache.volumeNow(pvName) != null) {
        volumes.settled(claimUid); // the PV exists: its release deletes the volume
      } else {
        PersistentVolumeClaim live =
            client
                .persistentVolumeClaims()
                .inNamespace(claim.namespace())
                .withName(claim.name())
                .get();
        if (live != null && claimUid.equals(live.getMetadata().getUid())) {
          return Optional.empty();
        }
        // Fails (retried) while Cinder still copies into a volume; while Cinder deletes one, it
        // is looked at again. Either way its source stays protected until nothing is left.
        int going = volumes.deleteOrphans(claimUid);
        if (going > 0) {
          java.time.Duration soFar = orphans.seen(claimUid);
          if (soFar.isZero()) {
            LOG.info("deleting {} volume(s) left by deleted claim {}", going, claimUid);
          }
          return Optional.of(Pace.nextLook(soFar));
        }
        if (orphans.knows(claimUid)) {
          LOG.info("deleted the volume(s) left by deleted claim {}", claimUid);
          orphans.done(claimUid);
        }
      }
    }
    protection.release(claimUid);
    return Optional.empty();
  }

  /**
   * Asks Cinder for this cluster's volumes that were never handed to a PV: memory alone would
   * forget them at a restart, Cinder does not. One whose PV exists only misses its hand-over; one
   * whose claim still exists is left to the claim's own sync, which reuses it; the others are
   * abandoned. Then shared auth Secrets that no PV refers to go.
   */
  List<Abandoned> run() {
    List<Abandoned> abandoned = new ArrayList<>();
    List<Unfinished> unfinished;
    try {
      unfinished = volumes.unfinished();
    } catch (RuntimeException e) {
      // Cinder is down: the next resync asks again.
      LOG.info("cannot look for unfinished volumes in Cinder: {}", e.getMessage());
      unfinished = List.of();
    }
    for (Unfinished u : unfinished) {
      // Its PV exists: a provisioner stopped between creating the PV and handing the volume
      // over (a crash, a lost Lease).
      PersistentVolume pv = cache.volume(Names.pvName(u.claimUid()));
      if (pv != null
          && pv.getMetadata().getAnnotations() != null
          && u.volumeId().equals(pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID))
          && mine(pv)) {
        handOver(pv);
        continue;
      }
      PersistentVolumeClaim c = cache.claim(u.namespace(), u.name());
      if (c == null || !u.claimUid().equals(c.getMetadata().getUid())) {
        volumes.lookFor(u.claimUid());
        abandoned.add(new Abandoned(new WorkKey.Claim(u.namespace(), u.name()), u.claimUid()));
      }
    }
    try {
      int n = volumes.sweepSharedSecrets();
      if (n > 0) {
        LOG.info("deleted {} shared auth Secret(s) that no PV refers to", n);
      }
    } catch (RuntimeException e) {
      LOG.info("cannot sweep shared auth Secrets: {}", e.getMessage());
    }
    return abandoned;
  }

  private boolean mine(PersistentVolume pv) {
    Map<String, String> ann = pv.getMetadata().getAnnotations();
    return ann != null && settings.owns(ann.get(Names.ANN_IDENTITY));
  }

  /**
   * Marks the PV's volume as the PV's (see {@link VolumeProvisioner#handOver}). A failure is only
   * logged: while the PV exists no sweep touches its volume, and a retained PV repairs it when it
   * is released.
   */
  void handOver(PersistentVolume pv) {
    try {
      volumes.handOver(pv);
      handedOver.add(pv.getMetadata().getName());
    } catch (ProvisioningException e) {
      LOG.warn(
          "cannot mark the volume of {} as handed over (retried when it is released): {}",
          pv.getMetadata().getName(),
          e.getMessage());
    }
  }
}
