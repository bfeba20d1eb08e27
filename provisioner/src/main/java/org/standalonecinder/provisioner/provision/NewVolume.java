package org.standalonecinder.provisioner.provision;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import java.util.LinkedHashMap;
import java.util.Map;
import org.standalonecinder.provisioner.cinder.VolumeSpec;

/** What a claim's new volume is asked for with: its spec and the metadata it carries. */
final class NewVolume {

  private NewVolume() {}

  /** What a new volume of the claim carries: its identity, its state, and what fills it. */
  static Map<String, String> metadata(
      PersistentVolumeClaim claim, String pvName, VolumeSource source, String clusterId) {
    Map<String, String> meta =
        new LinkedHashMap<>(Names.identifying(claim.getMetadata().getUid(), clusterId));
    meta.put(Names.META_PVC_NAMESPACE, claim.getMetadata().getNamespace());
    meta.put(Names.META_PVC_NAME, claim.getMetadata().getName());
    meta.put(Names.META_PV_NAME, pvName);
    meta.put(Names.META_STATE, Names.STATE_PROVISIONING);
    if (source != null && source.restore()) {
      meta.put(Names.META_RESTORED_FROM, source.restoredFrom());
    } else if (source != null) {
      meta.put(Names.META_CLONE_OF, source.volumeId());
    }
    return meta;
  }

  /** The new volume of the claim: blank, or filled from its source. */
  static VolumeSpec spec(
      ClaimRequest req,
      PersistentVolumeClaim claim,
      String pvName,
      VolumeSource source,
      Placement placement,
      Map<String, String> meta) {
    VolumeSpec spec =
        VolumeSpec.blank(pvName, req.sizeGib())
            .withType(req.params().volumeType())
            .withDescription(
                "Kubernetes claim "
                    + claim.getMetadata().getNamespace()
                    + "/"
                    + claim.getMetadata().getName());
    if (source instanceof VolumeSource.FromSnapshot s) {
      spec =
          spec.fromSnapshot(s.snapshotId())
              .withDescription(spec.description() + ", restored from VolumeSnapshot " + s.claim());
    } else if (source instanceof VolumeSource.FromBackup b) {
      spec =
          spec.fromBackup(b.backupId())
              .withDescription(spec.description() + ", restored from VolumeSnapshot " + b.claim());
    } else if (source != null) {
      spec =
          spec.cloneOf(source.volumeId())
              .withDescription(spec.description() + ", a clone of " + source.claim());
    }
    return spec.withAvailabilityZone(placement.cinderZone()).withMetadata(meta);
  }
}
