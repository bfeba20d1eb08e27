package org.standalonecinder.provisioner.snapshot;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.controller.ClusterCache;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * Makes the {@code VolumeSnapshotContent} of a dynamic {@code VolumeSnapshot} of one of this
 * provisioner's claims, where the snapshot-controller cannot: it makes contents only for CSI
 * volumes, and binds one that someone else made under the name it looks for ({@code
 * snapcontent-<the snapshot's uid>}). The snapshot's class must name this provisioner as its
 * driver; the claim must be bound to a PV this provisioner made for that very claim.
 */
final class SnapshotSync {

  private static final Logger LOG = LoggerFactory.getLogger(SnapshotSync.class);

  private final ContentWrites writes;
  private final ClusterCache cluster;
  private final Function<VolumeSnapshot, SnapshotClass> classes;
  private final java.util.function.Predicate<String> contentExists;
  private final ProvisionerSettings settings;
  private final Runnable made;
  private final KeptCaps caps;

  /**
   * @param classes the VolumeSnapshotClass a snapshot names, or null
   * @param contentExists whether a content of that name exists, as the cache has it
   * @param caps the caps on the snapshots and backups kept
   */
  SnapshotSync(
      ContentWrites writes,
      ClusterCache cluster,
      Function<VolumeSnapshot, SnapshotClass> classes,
      java.util.function.Predicate<String> contentExists,
      ProvisionerSettings settings,
      Runnable made,
      KeptCaps caps) {
    this.made = made;
    this.caps = caps;
    this.writes = writes;
    this.cluster = cluster;
    this.classes = classes;
    this.contentExists = contentExists;
    this.settings = settings;
  }

  /**
   * Makes the snapshot's content if it is ours to make and none exists.
   *
   * @throws ProvisioningException when it cannot be made (yet)
   */
  void sync(VolumeSnapshot s) {
    if (s.deleting() || s.claimName() == null || s.contentName() != null || s.uid() == null) {
      return;
    }
    String contentName = SnapshotApi.contentName(s.uid());
    if (contentExists.test(contentName)) {
      return;
    }
    SnapshotClass cls = s.className() == null ? null : classes.apply(s);
    if (cls == null || !settings.provisionerName().equals(cls.driver())) {
      return;
    }
    // A claim not there or not bound yet is waited for, quietly (the snapshot-controller tells the
    // user): the claim's next change brings the snapshot back.
    PersistentVolumeClaim claim = cluster.claim(s.namespace(), s.claimName());
    String pvName =
        claim == null || claim.getSpec() == null ? null : claim.getSpec().getVolumeName();
    PersistentVolume pv = pvName == null || pvName.isEmpty() ? null : cluster.volume(pvName);
    if (pvName == null || pvName.isEmpty()) {
      LOG.debug("snapshot {}: claim {} is not bound yet", s.key(), s.claimName());
      return;
    }
    if (pv == null) {
      // Bound to a PV this replica's cache has not seen yet: soon.
      throw new ProvisioningException(
          "PV " + pvName + " of claim " + s.claimName() + " is not known yet", false, null);
    }
    String volumeId = volumeOf(pv, claim);
    if (volumeId == null) {
      throw ProvisioningException.invalid(
          "claim "
              + s.namespace()
              + "/"
              + s.claimName()
              + " is bound to PV "
              + pvName
              + ", which "
              + settings.provisionerName()
              + " did not make for it; class "
              + cls.name()
              + " snapshots only that provisioner's volumes");
    }
    // Final until something changes: looked at again at the resync (or a change of its claim),
    // so it is made once one of those kept is deleted.
    caps.admit(s, volumeId, contentName)
        .ifPresent(
            why -> {
              throw ProvisioningException.invalid(why);
            });
    if (writes.create(s, cls, settings.provisionerName(), volumeId, pv.getSpec().getVolumeMode())) {
      made.run();
      LOG.info(
          "snapshot {}: made content {} for volume {} of claim {}",
          s.key(),
          contentName,
          volumeId,
          s.claimName());
    }
  }

  /**
   * The Cinder volume of the PV when this provisioner made the PV for this claim (its identity
   * annotation, and a claimRef with the claim's uid); null otherwise.
   */
  private String volumeOf(PersistentVolume pv, PersistentVolumeClaim claim) {
    Map<String, String> ann = pv.getMetadata().getAnnotations();
    if (ann == null
        || !settings.provisionerName().equals(ann.get(ClaimAnnotations.PROVISIONED_BY))
        || !settings.owns(ann.get(Names.ANN_IDENTITY))) {
      return null;
    }
    var ref = pv.getSpec().getClaimRef();
    if (ref == null || ref.getUid() == null || !ref.getUid().equals(claim.getMetadata().getUid())) {
      return null;
    }
    return ann.get(ClaimAnnotations.VOLUME_ID);
  }
}
