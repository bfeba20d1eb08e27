package org.standalonecinder.provisioner.cinder;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * A Cinder volume as this project sees it.
 *
 * @param id Cinder's UUID
 * @param name the name we gave it (derived from the PVC UID)
 * @param status Cinder's status string ({@code creating}, {@code available}, {@code in-use}...)
 * @param sizeGib size in GiB
 * @param availabilityZone the zone Cinder placed it in
 * @param volumeType the volume type's name
 * @param metadata the volume's metadata
 * @param sourceVolumeId the volume it was cloned from, or null
 * @param snapshotId the snapshot it was created from, or null
 * @param multiattach whether the volume may be attached more than once
 * @param attachmentIds ids of its attachments
 * @param attachedHosts the host each completed attachment names, by attachment id (Cinder lists an
 *     attachment on the volume only once it is complete)
 * @param createdAt when Cinder created it (its {@code created_at}, by Cinder's clock), or null
 */
public record Volume(
    String id,
    String name,
    String status,
    int sizeGib,
    String availabilityZone,
    String volumeType,
    Map<String, String> metadata,
    String sourceVolumeId,
    String snapshotId,
    boolean multiattach,
    List<String> attachmentIds,
    Map<String, String> attachedHosts,
    Instant createdAt) {

  public Volume {
    metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
    attachmentIds = attachmentIds == null ? List.of() : List.copyOf(attachmentIds);
    attachedHosts = attachedHosts == null ? Map.of() : Map.copyOf(attachedHosts);
  }

  /** Without the hosts of its attachments. */
  public Volume(
      String id,
      String name,
      String status,
      int sizeGib,
      String availabilityZone,
      String volumeType,
      Map<String, String> metadata,
      String sourceVolumeId,
      String snapshotId,
      boolean multiattach,
      List<String> attachmentIds) {
    this(
        id,
        name,
        status,
        sizeGib,
        availabilityZone,
        volumeType,
        metadata,
        sourceVolumeId,
        snapshotId,
        multiattach,
        attachmentIds,
        Map.of(),
        null);
  }

  /** Without the time it was created. */
  public Volume(
      String id,
      String name,
      String status,
      int sizeGib,
      String availabilityZone,
      String volumeType,
      Map<String, String> metadata,
      String sourceVolumeId,
      String snapshotId,
      boolean multiattach,
      List<String> attachmentIds,
      Map<String, String> attachedHosts) {
    this(
        id,
        name,
        status,
        sizeGib,
        availabilityZone,
        volumeType,
        metadata,
        sourceVolumeId,
        snapshotId,
        multiattach,
        attachmentIds,
        attachedHosts,
        null);
  }
}
