package org.standalonecinder.provisioner.provision;

import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.CinderExport;
import org.standalonecinder.provisioner.cinder.ExportPath;
import org.standalonecinder.provisioner.cinder.Rollback;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.mapping.MappedVolume;
import org.standalonecinder.provisioner.mapping.MappingContext;
import org.standalonecinder.provisioner.mapping.RbdOptions;
import org.standalonecinder.provisioner.mapping.VolumeMappers;

/**
 * A claim's volume exported to the cluster (one connector for all its nodes) and its connection
 * info mapped to a PV source.
 */
final class ClaimExport {

  private final CinderClient cinder;
  private final CinderExport exports;
  private final VolumeMappers mappers;
  private final ProvisionerSettings settings;

  ClaimExport(
      CinderClient cinder,
      CinderExport exports,
      VolumeMappers mappers,
      ProvisionerSettings settings) {
    this.cinder = cinder;
    this.exports = exports;
    this.mappers = mappers;
    this.settings = settings;
  }

  /** Exports the claim's volume to the cluster through Cinder (its undo pushed on rollback). */
  CinderExport.Exported export(Volume volume, Rollback rollback) {
    CinderExport.Exported export =
        exports.export(volume.id(), settings.connector(), false, rollback);
    if (export.path() == ExportPath.ATTACHMENTS) {
      if (export.info() == null) {
        throw new ProvisioningException(
            "Cinder created attachment " + export.attachmentId() + " without connection info",
            false,
            null);
      }
      cinder.completeAttachment(export.attachmentId());
    }
    return export;
  }

  /** The export's connection info as a PV source, with the auth it needs. */
  MappedVolume map(
      CinderExport.Exported export, ClaimRequest req, String pvName, RbdOptions rbdOptions) {
    return mappers.map(
        export.info(),
        new MappingContext(
            pvName,
            settings.initiatorName(),
            req.params().fsType(),
            req.block(),
            req.readOnly(),
            settings.secretNamespace(),
            Names.secretLabels(pvName),
            Names.sharedSecretLabels(),
            rbdOptions,
            req.multiNode(),
            req.params().iscsiChap() != null
                ? "optional".equals(req.params().iscsiChap())
                : settings.iscsiChapOptional()));
  }
}
