package org.standalonecinder.provisioner.mapping;

import org.standalonecinder.provisioner.cinder.ConnectionInfo;

/** Turns Cinder's {@code connection_info} of one protocol into a native PV source. */
public interface VolumeMapper {

  /** The {@code driver_volume_type} this mapper handles, e.g. {@code iscsi}. */
  String driverVolumeType();

  /**
   * Maps the export.
   *
   * @throws UnmappableExportException when the connection info lacks what the protocol needs
   */
  MappedVolume map(ConnectionInfo info, MappingContext ctx);
}
