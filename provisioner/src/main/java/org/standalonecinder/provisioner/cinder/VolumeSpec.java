package org.standalonecinder.provisioner.cinder;

import java.util.Map;
import java.util.Objects;

/**
 * What to create: a blank volume, a clone of another volume, or a volume from a snapshot.
 *
 * @param name the volume's name; the provisioner derives it from the PVC UID so that a retry finds
 *     the volume of an earlier attempt
 * @param sizeGib size in GiB, at least 1
 * @param volumeType a volume type name, or null for the cloud's default
 * @param availabilityZone a zone, or null for the cloud's choice
 * @param description free text, or null
 * @param metadata metadata to set
 * @param sourceVolumeId clone from this volume, or null
 * @param snapshotId create from this snapshot, or null
 * @param backupId create from this backup (Cinder's backup service writes its data), or null
 */
public record VolumeSpec(
    String name,
    int sizeGib,
    String volumeType,
    String availabilityZone,
    String description,
    Map<String, String> metadata,
    String sourceVolumeId,
    String snapshotId,
    String backupId) {

  public VolumeSpec {
    Objects.requireNonNull(name, "name");
    if (sizeGib < 1) {
      throw new IllegalArgumentException("sizeGib must be at least 1, was " + sizeGib);
    }
    if ((sourceVolumeId != null ? 1 : 0) + (snapshotId != null ? 1 : 0) + (backupId != null ? 1 : 0)
        > 1) {
      throw new IllegalArgumentException(
          "a volume has one source: a volume, a snapshot or a backup");
    }
    description = CinderText.bounded(description);
    metadata = CinderText.bounded(metadata);
  }

  /** A blank volume with no type, zone or metadata. */
  public static VolumeSpec blank(String name, int sizeGib) {
    return new VolumeSpec(name, sizeGib, null, null, null, Map.of(), null, null, null);
  }

  public VolumeSpec withType(String type) {
    return new VolumeSpec(
        name,
        sizeGib,
        type,
        availabilityZone,
        description,
        metadata,
        sourceVolumeId,
        snapshotId,
        backupId);
  }

  public VolumeSpec withAvailabilityZone(String zone) {
    return new VolumeSpec(
        name,
        sizeGib,
        volumeType,
        zone,
        description,
        metadata,
        sourceVolumeId,
        snapshotId,
        backupId);
  }

  public VolumeSpec withDescription(String text) {
    return new VolumeSpec(
        name,
        sizeGib,
        volumeType,
        availabilityZone,
        text,
        metadata,
        sourceVolumeId,
        snapshotId,
        backupId);
  }

  public VolumeSpec withMetadata(Map<String, String> meta) {
    return new VolumeSpec(
        name,
        sizeGib,
        volumeType,
        availabilityZone,
        description,
        meta,
        sourceVolumeId,
        snapshotId,
        backupId);
  }

  public VolumeSpec cloneOf(String volumeId) {
    return new VolumeSpec(
        name, sizeGib, volumeType, availabilityZone, description, metadata, volumeId, null, null);
  }

  public VolumeSpec fromSnapshot(String id) {
    return new VolumeSpec(
        name, sizeGib, volumeType, availabilityZone, description, metadata, null, id, null);
  }

  public VolumeSpec fromBackup(String id) {
    return new VolumeSpec(
        name, sizeGib, volumeType, availabilityZone, description, metadata, null, null, id);
  }
}
