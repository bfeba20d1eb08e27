package org.standalonecinder.provisioner.provision;

import org.standalonecinder.api.ClaimRef;

/**
 * What a new volume is filled from, resolved down to Cinder and checked: a claim's volume cloned,
 * or a VolumeSnapshot restored from its Cinder snapshot or backup. A blank volume has none (null).
 */
public sealed interface VolumeSource
    permits VolumeSource.Clone, VolumeSource.FromSnapshot, VolumeSource.FromBackup {

  /** The source claim; for a restore, the VolumeSnapshot (its namespace and name). */
  ClaimRef claim();

  /**
   * The Cinder volume to clone; for a restore, the volume the snapshot or backup was taken of
   * (which may be gone: then null).
   */
  String volumeId();

  /** The smallest volume it fills. */
  int sizeGib();

  /** The zone the new volume must be in, or null for any. */
  String availabilityZone();

  /** The volume type the new volume keeps, or null. */
  String volumeType();

  /** The Cinder status of what is copied (the volume, the snapshot or the backup). */
  String status();

  /** Whether it restores a VolumeSnapshot (rather than clones a volume). */
  default boolean restore() {
    return !(this instanceof Clone);
  }

  /** The Cinder snapshot or backup it restores, or null for a clone. */
  default String restoredFrom() {
    if (this instanceof FromSnapshot s) {
      return s.snapshotId();
    }
    return this instanceof FromBackup b ? b.backupId() : null;
  }

  /** How events and descriptions name it: {@code a clone of ns/name}, {@code restored from ...}. */
  default String describe() {
    if (this instanceof FromSnapshot s) {
      return "restored from VolumeSnapshot "
          + claim()
          + " (Cinder snapshot "
          + s.snapshotId()
          + ")";
    }
    if (this instanceof FromBackup b) {
      return "restored from VolumeSnapshot " + claim() + " (Cinder backup " + b.backupId() + ")";
    }
    return "a clone of " + claim() + " (Cinder volume " + volumeId() + ")";
  }

  /**
   * A claim's Cinder volume, cloned by Cinder; the new volume stays in its zone and type. {@code
   * claimUid} is the uid of the source claim as resolved: what is protected is that claim.
   */
  record Clone(
      ClaimRef claim,
      String claimUid,
      String volumeId,
      int sizeGib,
      String availabilityZone,
      String volumeType,
      String status)
      implements VolumeSource {}

  /**
   * A Cinder snapshot, copied by Cinder into a new volume of its volume's zone and type (when that
   * volume is still there).
   */
  record FromSnapshot(
      ClaimRef claim,
      String snapshotId,
      String volumeId,
      int sizeGib,
      String availabilityZone,
      String volumeType,
      String status)
      implements VolumeSource {}

  /**
   * A Cinder backup, restored by Cinder's backup service into a new volume of any zone and type.
   */
  record FromBackup(ClaimRef claim, String backupId, String volumeId, int sizeGib, String status)
      implements VolumeSource {
    @Override
    public String availabilityZone() {
      return null;
    }

    @Override
    public String volumeType() {
      return null;
    }
  }
}
