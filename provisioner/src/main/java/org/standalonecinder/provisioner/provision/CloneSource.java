package org.standalonecinder.provisioner.provision;

import org.standalonecinder.api.ClaimRef;

/**
 * What a new volume is filled from, resolved down to Cinder and checked: a clone's source volume,
 * or a restore's snapshot.
 *
 * @param claim the source claim; for a restore, the VolumeSnapshot (its namespace and name)
 * @param volumeId the Cinder volume to clone; for a restore, the volume the snapshot was taken of
 *     (which may be gone: then null)
 * @param sizeGib the smallest volume it fills
 * @param availabilityZone the zone the new volume must be in, or null for any
 * @param volumeType the source's volume type, or null
 * @param status the source volume's status ({@code available} or {@code in-use}), or the snapshot's
 * @param snapshotId the Cinder snapshot to restore, or null
 * @param backupId the Cinder backup to restore, or null
 */
public record CloneSource(
    ClaimRef claim,
    String volumeId,
    int sizeGib,
    String availabilityZone,
    String volumeType,
    String status,
    String snapshotId,
    String backupId) {

  /** A clone of a claim's volume. */
  public CloneSource(
      ClaimRef claim,
      String volumeId,
      int sizeGib,
      String availabilityZone,
      String volumeType,
      String status) {
    this(claim, volumeId, sizeGib, availabilityZone, volumeType, status, null, null);
  }

  /** Whether it restores a VolumeSnapshot (rather than clones a volume). */
  public boolean restore() {
    return snapshotId != null || backupId != null;
  }

  /** The Cinder snapshot or backup it restores, or null for a clone. */
  public String restoredFrom() {
    return snapshotId != null ? snapshotId : backupId;
  }

  /** How events and descriptions name it: {@code a clone of ns/name}, {@code restored from ...}. */
  public String describe() {
    return restore()
        ? "restored from VolumeSnapshot "
            + claim
            + (snapshotId != null ? " (Cinder snapshot " : " (Cinder backup ")
            + restoredFrom()
            + ")"
        : "a clone of " + claim + " (Cinder volume " + volumeId + ")";
  }
}
