package org.standalonecinder.provisioner.provision;

import java.util.List;
import java.util.Map;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.Volume;

/**
 * A quirk of Cinder's backup restore that the claim's identity must survive: once the backup
 * service has written a backup into a new volume, its driver replaces the volume's metadata whole
 * with the metadata of the volume the backup was made of (Cinder 2023.1, {@code
 * BackupMetadataAPI._restore_vol_meta}), then adds {@code src_backup_id}. The volume made for a
 * claim then says it is another claim's (often a claim that is gone), and a look-up by this claim's
 * identity misses it. It keeps its name, which is this claim's ({@code pvc-<uid>}).
 */
final class RestoredFromBackup {

  /** What Cinder adds to the metadata of a volume made from a backup. */
  static final String SRC_BACKUP = "src_backup_id";

  private RestoredFromBackup() {}

  /**
   * The volumes named after the claim that a backup was restored into and that carry another
   * claim's identity: the claim's own, left so by an attempt that ended (a crash, a deadline) after
   * Cinder restored it and before this provisioner gave it its identity back. Never handed to a PV:
   * that comes after.
   */
  static List<Volume> underAnotherIdentity(CinderClient cinder, String pvName, String claimUid) {
    return cinder.findVolumes(pvName, Map.of()).stream()
        .filter(v -> underAnotherIdentity(v, pvName, claimUid))
        .toList();
  }

  /** Whether {@code v} is such a volume (see {@link #underAnotherIdentity(CinderClient, ...)}). */
  static boolean underAnotherIdentity(Volume v, String pvName, String claimUid) {
    return pvName.equals(v.name())
        && v.metadata().containsKey(SRC_BACKUP)
        && !claimUid.equals(v.metadata().get(Names.META_PVC_UID));
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
