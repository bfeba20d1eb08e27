package org.standalonecinder.provisioner.provision;

import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.VolumeNodeAffinityBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.LinkedHashMap;
import java.util.Map;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.mapping.MappedVolume;

/**
 * The PersistentVolume of a provisioned volume: who made it (provisioner, identity, volume id, how
 * it was exported), its claim, class, capacity, modes, node affinity and the mapped source.
 */
final class PvTemplate {

  private PvTemplate() {}

  /** The PV that describes the exported volume, for the claim and its class. */
  static PersistentVolume of(
      ProvisionerSettings settings,
      PersistentVolumeClaim claim,
      StorageClass sc,
      ClaimRequest req,
      String pvName,
      Volume volume,
      String attachment,
      MappedVolume mapped,
      Placement placement) {
    Map<String, String> annotations = new LinkedHashMap<>();
    annotations.put(ClaimAnnotations.PROVISIONED_BY, settings.provisionerName());
    annotations.put(ClaimAnnotations.VOLUME_ID, volume.id());
    annotations.put(Names.ANN_IDENTITY, settings.identity());
    annotations.put(Names.ANN_ATTACHMENT, attachment);
    PersistentVolume pv =
        new PersistentVolumeBuilder()
            .withNewMetadata()
            .withName(pvName)
            .withAnnotations(annotations)
            .endMetadata()
            .withNewSpec()
            .withCapacity(Map.of("storage", new Quantity(volume.sizeGib() + "Gi")))
            .withAccessModes(claim.getSpec().getAccessModes())
            .withClaimRef(
                new ObjectReferenceBuilder()
                    .withApiVersion("v1")
                    .withKind("PersistentVolumeClaim")
                    .withNamespace(claim.getMetadata().getNamespace())
                    .withName(claim.getMetadata().getName())
                    .withUid(claim.getMetadata().getUid())
                    .build())
            .withStorageClassName(sc.getMetadata().getName())
            .withPersistentVolumeReclaimPolicy(
                sc.getReclaimPolicy() == null ? "Delete" : sc.getReclaimPolicy())
            .withMountOptions(sc.getMountOptions())
            .withVolumeMode(req.block() ? "Block" : "Filesystem")
            .endSpec()
            .build();
    if (placement.nodeZone() != null) {
      pv.getSpec()
          .setNodeAffinity(
              new VolumeNodeAffinityBuilder()
                  .withNewRequired()
                  .addNewNodeSelectorTerm()
                  .addNewMatchExpression()
                  .withKey(settings.topology().zoneLabel())
                  .withOperator("In")
                  .withValues(placement.nodeZone())
                  .endMatchExpression()
                  .endNodeSelectorTerm()
                  .endRequired()
                  .build());
    }
    mapped.source().accept(pv.getSpec());
    return pv;
  }
}
