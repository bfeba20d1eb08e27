package org.standalonecinder.provisioner.provision;

import java.util.List;
import java.util.Map;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.Volume;

/**
 * A quirk of Cinder's backup restore that the claim's identity must survive: while the backup
 * service writes a backup into a new volume, its driver replaces the volume's metadata whole with
 * the metadata of the volume the backup was made of (Cinder 2023.1, {@code
 * BackupMetadataAPI._restore_vol_meta}), and only after it has detached the volume does the manager
 * add {@code src_backup_id} and mark the volume available. The volume made for a claim then says it
 * is another claim's (often a claim that is gone), and a look-up by this claim's identity misses
 * it. It keeps its name, which is this claim's ({@code pvc-<uid>}): the UID makes it no other
 * claim's.
 */
final class RestoredFromBackup {

  /** What Cinder adds to the metadata of a volume made from a backup. */
  static final String SRC_BACKUP = "src_backup_id";

  private RestoredFromBackup() {}

  /**
   * The volumes named after the claim that a backup was restored into and that carry another
   * claim's identity: the claim's own, left so by an attempt that ended (a crash, a deadline) after
   * Cinder wrote the source's metadata and before this provisioner gave it its identity back. Never
   * handed to a PV: that comes after.
   *
   * @param backupId the backup the claim restores, or null when not known (a deleted claim's)
   */
  static List<Volume> underAnotherIdentity(
      CinderClient cinder, String pvName, String claimUid, String backupId) {
    return cinder.findVolumes(pvName, Map.of()).stream()
        .filter(v -> underAnotherIdentity(v, pvName, claimUid, backupId))
        .toList();
  }

  /**
   * Whether {@code v} is such a volume (see {@link #underAnotherIdentity(CinderClient, String,
   * String, String)}): restored (from {@code backupId} when given), or still being restored or
   * failed there, when Cinder has written the source's metadata and not yet {@code src_backup_id}.
   */
  static boolean underAnotherIdentity(Volume v, String pvName, String claimUid, String backupId) {
    if (!pvName.equals(v.name()) || claimUid.equals(v.metadata().get(Names.META_PVC_UID))) {
      return false;
    }
    String from = v.metadata().get(SRC_BACKUP);
    if (from != null) {
      return backupId == null || backupId.equals(from);
    }
    // Between the two writes the status is still the making's, or error when the restore failed
    // after the metadata was written: missing it here made a second volume and leaked this one.
    return BeingMade.isBeingMade(v) || v.status().startsWith("error");
  }

  /**
   * Gives the restored volume the claim's identity back (every key the provisioner writes; the
   * source's other keys and {@code src_backup_id} stay, as Cinder has them).
   */
  static Volume identityBack(CinderClient cinder, Volume restored, Map<String, String> identity) {
    cinder.updateVolumeMetadata(restored.id(), identity);
    return cinder.getVolume(restored.id()).orElse(restored);
  }
}
