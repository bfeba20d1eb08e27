package org.standalonecinder.provisioner.expansion;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimCondition;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.math.RoundingMode;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.api.ClassParameters;
import org.standalonecinder.api.InvalidClassParametersException;
import org.standalonecinder.provisioner.controller.ClusterCache;
import org.standalonecinder.provisioner.controller.EventRecorder;
import org.standalonecinder.provisioner.controller.Pace;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.provision.ClaimRequest;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.VolumeExpander;

/**
 * Grows the volume of a bound claim whose request grew, as Kubernetes' external resizers do: the
 * Cinder volume first, then the PV's capacity, then the claim's status.
 *
 * <p>Kubernetes' expand controller leaves these claims to "an external controller" (the in-tree
 * iSCSI and FC plugins cannot expand), and kubelet grows a filesystem only for plugins that can
 * (in-tree iSCSI and FC cannot). So a raw block claim is done once the PV is bigger (its status
 * capacity is set here), while a filesystem claim keeps the {@code FileSystemResizePending}
 * condition until its node grows the filesystem (the node component, {@code grow-filesystems},
 * which then finishes the claim's status) or someone does by hand: the event says how. Every step
 * is safe to repeat: each compares what is with what is asked.
 */
public final class ClaimExpansion {

  private final KubernetesClient client;
  private final ClusterCache cache;
  private final String identity;
  private final VolumeExpander expander;
  private final EventRecorder events;
  private final Clock clock;
  private final Pace pace;

  /** Claims whose expansion was refused, with what was tried (see {@link #ifAsked}). */
  private final Map<String, String> refused = new ConcurrentHashMap<>();

  /**
   * @param identity the identity of this provisioner instance: only its own PVs are grown
   */
  public ClaimExpansion(
      KubernetesClient client,
      ClusterCache cache,
      String identity,
      VolumeExpander expander,
      EventRecorder events,
      Clock clock) {
    this.client = client;
    this.cache = cache;
    this.identity = identity;
    this.expander = expander;
    this.events = events;
    this.clock = clock;
    this.pace = new Pace(clock);
  }

  /**
   * Grows the volume of a bound claim of this instance whose request grew. A refusal stands until
   * the request or the class changes, or the provisioner restarts (a new max-microversion, say):
   * this provisioner's own status edits change the claim too.
   *
   * @return when to look at the claim again, while Cinder extends its volume
   * @throws ProvisioningException told as {@value Resize#FAILED}
   */
  public Optional<Duration> ifAsked(PersistentVolumeClaim claim) {
    String pvName = claim.getSpec().getVolumeName();
    if (pvName == null
        || claim.getMetadata().getDeletionTimestamp() != null
        || claim.getStatus() == null
        || !"Bound".equals(claim.getStatus().getPhase())) {
      return Optional.empty();
    }
    PersistentVolume pv = cache.volume(pvName);
    if (pv == null
        || pv.getMetadata().getAnnotations() == null
        || !identity.equals(pv.getMetadata().getAnnotations().get(Names.ANN_IDENTITY))
        || pv.getSpec().getClaimRef() == null
        || !claim.getMetadata().getUid().equals(pv.getSpec().getClaimRef().getUid())
        || !wanted(claim, pv)) {
      return Optional.empty();
    }
    String className = claim.getSpec().getStorageClassName();
    StorageClass sc = className == null ? null : cache.storageClass(className);
    String attempt =
        claim.getMetadata().getUid()
            + " "
            + claim.getSpec().getResources().getRequests()
            + " "
            + (sc == null ? "" : sc.getMetadata().getResourceVersion());
    String key = claim.getMetadata().getNamespace() + "/" + claim.getMetadata().getName();
    if (attempt.equals(refused.get(key))) {
      return Optional.empty();
    }
    try {
      Optional<Duration> again = sync(claim, pv, sc);
      refused.remove(key);
      return again;
    } catch (ProvisioningException e) {
      if (e.isFinal()) {
        refused.put(key, attempt);
      }
      throw e.toldAs(Resize.FAILED);
    } catch (KubernetesClientException e) {
      throw new ProvisioningException(e.getMessage(), false, e).toldAs(Resize.FAILED);
    }
  }

  /** The claim is gone: a refusal of it is forgotten. */
  public void forget(PersistentVolumeClaim claim) {
    refused.remove(claim.getMetadata().getNamespace() + "/" + claim.getMetadata().getName());
  }

  /**
   * Whether the claim asks for more than its PV has, or its status still lags behind the PV. A
   * request that is no size is wanted: the look that follows refuses it, and says why.
   */
  static boolean wanted(PersistentVolumeClaim claim, PersistentVolume pv) {
    int pvGib = Sizes.gib(Sizes.storage(pv.getSpec().getCapacity()), RoundingMode.FLOOR);
    try {
      if (Sizes.exceeds(Sizes.storage(claim.getSpec().getResources().getRequests()), pvGib)) {
        return true;
      }
    } catch (ProvisioningException noSize) {
      return true;
    }
    int status =
        claim.getStatus() == null
            ? 0
            : Sizes.statusGib(Sizes.storage(claim.getStatus().getCapacity()));
    return status < pvGib && !Resize.hasCondition(claim, Resize.FS_PENDING);
  }

  /**
   * Brings the volume, the PV and the claim's status to the claim's request.
   *
   * @return when to look again, while Cinder extends the volume
   * @throws ProvisioningException when something cannot be done (now or at all)
   */
  Optional<Duration> sync(PersistentVolumeClaim claim, PersistentVolume pv, StorageClass sc) {
    int pvGib = Sizes.gib(Sizes.storage(pv.getSpec().getCapacity()), RoundingMode.FLOOR);
    Quantity request = Sizes.storage(claim.getSpec().getResources().getRequests());
    if (Sizes.exceeds(request, pvGib)) {
      allowed(claim, sc, request, pvGib);
    }
    int asked = Sizes.gib(request, RoundingMode.CEILING);
    if (asked > pvGib) {
      // The cache may not have seen the PV grown by the look before this one: read as it is, so
      // that a grown claim is not marked Resizing again for a moment (seen in ExpansionTest).
      PersistentVolume now = client.persistentVolumes().withName(pv.getMetadata().getName()).get();
      if (now != null && now.getSpec() != null && now.getSpec().getCapacity() != null) {
        pv = now;
        pvGib = Sizes.gib(Sizes.storage(pv.getSpec().getCapacity()), RoundingMode.FLOOR);
      }
    }
    if (asked > pvGib) {
      growable(pv, pvGib);
      String volumeId = pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
      setResizing(claim);
      events.normal(
          claim,
          Resize.RESIZING,
          "growing Cinder volume " + volumeId + " from " + pvGib + " to " + asked + " GiB");
      VolumeExpander.Outcome outcome;
      try {
        outcome = expander.expand(volumeId, asked);
      } catch (ProvisioningException e) {
        pace.done(volumeId);
        if (e.isFinal()) {
          // Not growing until the claim or the admin changes something: not "Resizing" either.
          clearResizing(claim);
        }
        throw e;
      }
      if (outcome instanceof VolumeExpander.Growing growing) {
        return Optional.of(growing(claim, growing));
      }
      pace.done(volumeId);
      pvGib = ((VolumeExpander.Grown) outcome).toGib();
      int size = pvGib;
      client
          .persistentVolumes()
          .withName(pv.getMetadata().getName())
          .edit(p -> withCapacity(p, size));
    }
    finish(claim, pv, pvGib);
    return Optional.empty();
  }

  /**
   * Whether the claim's class lets it grow to {@code request}: checked before Cinder is asked, so a
   * tenant's resize never takes the project's quota past the class's largest size.
   */
  private static void allowed(
      PersistentVolumeClaim claim, StorageClass sc, Quantity request, int pvGib) {
    if (sc == null || !Boolean.TRUE.equals(sc.getAllowVolumeExpansion())) {
      throw ProvisioningException.invalid(
          "StorageClass "
              + claim.getSpec().getStorageClassName()
              + " does not allow volume expansion (allowVolumeExpansion: true); the volume stays"
              + " at "
              + pvGib
              + " GiB");
    }
    ClassParameters params;
    try {
      params = ClassParameters.parse(sc.getParameters());
    } catch (InvalidClassParametersException e) {
      throw ProvisioningException.invalid(e.getMessage());
    }
    if (Sizes.exceeds(request, params.largestGib())) {
      throw ProvisioningException.invalid(
          "growing to "
              + request
              + " is refused: "
              + ClaimRequest.largest(sc.getMetadata().getName(), params)
              + "; the volume stays at "
              + pvGib
              + " GiB");
    }
  }

  /** Whether this provisioner grows the PV's kind of source. */
  private static void growable(PersistentVolume pv, int pvGib) {
    if (pv.getSpec().getRbd() != null) {
      // Kubernetes' expand controller takes in-tree rbd claims too, and on the real 1.20.2 it
      // crashed the whole controller-manager (a nil claim at expand_controller.go:290, when its
      // status patch met a newer claim) while this provisioner wrote the claim's conditions.
      throw ProvisioningException.invalid(
          "growing in-tree rbd PVs is refused: Kubernetes' own expand controller acts on them too"
              + " and can crash the controller-manager when another writer updates the claim"
              + " meanwhile; the volume stays at "
              + pvGib
              + " GiB");
    }
    if (pv.getSpec().getCsi() != null) {
      // Its filesystem is ceph-csi's node plugin's to grow, which nothing here has tried.
      throw ProvisioningException.invalid(
          "growing ceph-csi PVs is not supported yet; the volume stays at " + pvGib + " GiB");
    }
  }

  /**
   * Cinder is extending the volume: no worker waits for it. The claim keeps its {@code Resizing}
   * condition and is looked at again; one that lasts past {@link #STUCK_AFTER} is told as a warning
   * (looked at still: Cinder may yet finish).
   */
  private Duration growing(PersistentVolumeClaim claim, VolumeExpander.Growing g) {
    Duration soFar = pace.seen(g.volumeId());
    if (soFar.compareTo(STUCK_AFTER) >= 0) {
      events.warning(
          claim,
          Resize.RESIZING,
          "Cinder is still growing volume "
              + g.volumeId()
              + " (status "
              + g.status()
              + "); "
              + Pace.soFar(soFar)
              + ": longer than expected; see cinder-volume's log");
    }
    return Pace.nextLook(soFar);
  }

  /** How long Cinder may take to grow a volume before the claim is told as a warning. */
  static final Duration STUCK_AFTER = Duration.ofMinutes(30);

  /** The claim's status once its PV has {@code pvGib}. */
  private void finish(PersistentVolumeClaim claim, PersistentVolume pv, int pvGib) {
    boolean block = "Block".equals(pv.getSpec().getVolumeMode());
    var resource =
        client
            .persistentVolumeClaims()
            .inNamespace(claim.getMetadata().getNamespace())
            .withName(claim.getMetadata().getName());
    if (block) {
      resource.editStatus(c -> Resize.finished(c, new Quantity(pvGib + "Gi")));
      events.normal(
          claim,
          "VolumeResizeSuccessful",
          "volume grown to "
              + pvGib
              + " GiB; a node that has it attached sees the new size once it rescans the device:"
              + " the node component (grow-filesystems) does where it is installed, elsewhere"
              + " iscsiadm -m session -R for iSCSI, or attaching it again");
      return;
    }
    if (Resize.hasCondition(claim, Resize.FS_PENDING)) {
      return;
    }
    String message =
        "the volume is "
            + pvGib
            + " GiB; kubelet's in-tree iSCSI and FC plugins do not grow filesystems: the node"
            + " component (grow-filesystems) does where it is installed; elsewhere, as root on the"
            + " node that mounts the claim: standalone-cinder grow-filesystems --pv "
            + pv.getMetadata().getName()
            + " (or rescan the device, iscsiadm -m session -R for iSCSI, and grow the filesystem,"
            + " resize2fs for ext4, xfs_growfs for xfs)";
    resource.editStatus(
        c -> {
          List<PersistentVolumeClaimCondition> conditions =
              Resize.without(c, Resize.RESIZING, Resize.FS_PENDING);
          conditions.add(Resize.condition(Resize.FS_PENDING, message, clock));
          c.getStatus().setConditions(conditions);
          return c;
        });
    events.warning(claim, "FileSystemResizeRequired", message);
  }

  private void setResizing(PersistentVolumeClaim claim) {
    if (Resize.hasCondition(claim, Resize.RESIZING)) {
      return;
    }
    client
        .persistentVolumeClaims()
        .inNamespace(claim.getMetadata().getNamespace())
        .withName(claim.getMetadata().getName())
        .editStatus(
            c -> {
              List<PersistentVolumeClaimCondition> conditions =
                  Resize.without(c, Resize.RESIZING, Resize.FS_PENDING);
              conditions.add(Resize.condition(Resize.RESIZING, "growing the Cinder volume", clock));
              c.getStatus().setConditions(conditions);
              return c;
            });
  }

  private void clearResizing(PersistentVolumeClaim claim) {
    client
        .persistentVolumeClaims()
        .inNamespace(claim.getMetadata().getNamespace())
        .withName(claim.getMetadata().getName())
        .editStatus(
            c -> {
              c.getStatus().setConditions(Resize.without(c, Resize.RESIZING));
              return c;
            });
  }

  private static PersistentVolume withCapacity(PersistentVolume p, int gib) {
    p.getSpec().setCapacity(Sizes.withStorage(p.getSpec().getCapacity(), gib));
    return p;
  }
}
