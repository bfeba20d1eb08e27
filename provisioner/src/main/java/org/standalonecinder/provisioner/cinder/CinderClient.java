package org.standalonecinder.provisioner.cinder;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The narrow view of Cinder (block storage API v3) that the provisioner needs.
 *
 * <p>Implementations are thread-safe. Every method blocks until Cinder answered or the call's
 * timeout passed, and fails with a {@link CinderException} subtype mapped from Cinder's answer;
 * callers on an event loop must call it from a worker. The types are this project's own: no SDK
 * type crosses this interface.
 */
public interface CinderClient extends AutoCloseable {

  /** The server's microversion range and the version this client sends on every call. */
  ApiVersions apiVersions();

  /** Starts creating a volume; the result is usually still {@code creating}. */
  Volume createVolume(VolumeSpec spec);

  /** The volume, or empty when Cinder does not know it. */
  Optional<Volume> getVolume(String volumeId);

  /**
   * Volumes whose name is {@code name} (when not null) and whose metadata contains every entry of
   * {@code metadata}. Looking up before creating is what makes provisioning idempotent.
   */
  List<Volume> findVolumes(String name, Map<String, String> metadata);

  /**
   * Polls until the volume's status is one of {@code wanted}, with exponential backoff.
   *
   * @throws CinderException.UnexpectedState when it reaches an {@code error*} status or the
   *     deadline passes
   * @throws CinderException.NotFound when the volume disappears
   */
  Volume awaitVolumeStatus(String volumeId, Set<String> wanted, Backoff backoff);

  /**
   * Polls until Cinder no longer knows the volume.
   *
   * @throws CinderException.UnexpectedState when it reaches {@code error_deleting} or the deadline
   *     passes
   */
  void awaitVolumeDeleted(String volumeId, Backoff backoff);

  /**
   * Sets these metadata entries on the volume, leaving its other entries as they are (Cinder merges
   * them).
   */
  void updateVolumeMetadata(String volumeId, Map<String, String> metadata);

  /** Starts deleting the volume. A volume that is already gone counts as deleted. */
  void deleteVolume(String volumeId);

  /** Grows the volume to {@code newSizeGib}. */
  void extendVolume(String volumeId, int newSizeGib);

  /** Marks the volume {@code attaching} so nothing else takes it (os-reserve). */
  void reserve(String volumeId);

  /** Undoes {@link #reserve}: back to {@code available} (os-unreserve). */
  void unreserve(String volumeId);

  /**
   * Sets the volume {@code available} and {@code detached} whatever its state (os-reset_status).
   * Only for a volume Cinder itself left stuck: it changes Cinder's records, not the backend, so a
   * volume still exported stays exported. Cinder's default policy allows it to admins only.
   *
   * @throws CinderException.Forbidden when the policy does not allow it
   */
  void resetToAvailable(String volumeId);

  /** Exports the volume to the connector and returns how to reach it. */
  ConnectionInfo initializeConnection(String volumeId, Connector connector);

  /** Withdraws the export made for the connector. */
  void terminateConnection(String volumeId, Connector connector);

  /**
   * Creates a read-write attachment with a connector and no instance (Nova is never involved), and
   * returns it with its connection info. Needs microversion 3.27.
   *
   * @throws CinderException.Unsupported when the server is older
   */
  default Attachment createAttachment(String volumeId, Connector connector) {
    return createAttachment(volumeId, connector, false);
  }

  /**
   * As {@link #createAttachment(String, Connector)}; {@code readOnly} records the attachment's mode
   * as {@code ro}, which needs microversion 3.54. Cinder's drivers still export the volume
   * read-write, so whoever logs in must make the device read-only.
   *
   * @throws CinderException.Unsupported when the server is older than 3.27, or than 3.54 for a
   *     read-only attachment
   */
  Attachment createAttachment(String volumeId, Connector connector, boolean readOnly);

  /** The attachment with its connection info, or empty when Cinder does not know it (3.27). */
  Optional<Attachment> getAttachment(String attachmentId);

  /**
   * Every attachment of the volume, whatever its state. The volume's own view lists only completed
   * ones: an attachment made but never completed leaves the volume {@code attaching} with an empty
   * list there. Empty below microversion 3.27, which has no attachments.
   */
  List<Attachment> listAttachments(String volumeId);

  /** Marks the attachment complete, the volume becomes {@code in-use} (needs 3.44). */
  void completeAttachment(String attachmentId);

  /** Deletes the attachment. One that is already gone counts as deleted. */
  void deleteAttachment(String attachmentId);

  /**
   * Records a volume exported by {@link #initializeConnection} as attached to a host (os-attach):
   * the volume becomes {@code in-use} with an attachment that names the host. The attach of clouds
   * without the attachments API.
   *
   * @param mountpoint where the host sees the volume (Cinder only records it)
   */
  void markAttached(String volumeId, String hostName, String mountpoint, boolean readOnly);

  /**
   * Ends an attachment made by {@link #markAttached} (os-detach): Cinder removes the export and the
   * volume becomes {@code available} once it has no other attachment.
   */
  void markDetached(String volumeId, String attachmentId);

  /**
   * Starts a snapshot of the volume, {@code available} or {@code in-use} (crash-consistent: nothing
   * quiesces the filesystem). The result is usually still {@code creating}.
   */
  Snapshot createSnapshot(SnapshotSpec spec);

  /** The snapshot, or empty when Cinder does not know it. */
  Optional<Snapshot> getSnapshot(String snapshotId);

  /**
   * Snapshots whose name is {@code name} (when not null) and whose metadata contains every entry of
   * {@code metadata}: the look-up before a snapshot is taken, and the restart sweep's list.
   */
  List<Snapshot> findSnapshots(String name, Map<String, String> metadata);

  /**
   * Polls until the snapshot's status is one of {@code wanted}, with exponential backoff.
   *
   * @throws CinderException.UnexpectedState when it reaches an {@code error*} status or the
   *     deadline passes
   * @throws CinderException.NotFound when the snapshot disappears
   */
  Snapshot awaitSnapshotStatus(String snapshotId, Set<String> wanted, Backoff backoff);

  /**
   * Sets these metadata entries on the snapshot, leaving its other entries as they are (Cinder
   * merges them).
   */
  void updateSnapshotMetadata(String snapshotId, Map<String, String> metadata);

  /** Starts deleting the snapshot. One that is already gone counts as deleted. */
  void deleteSnapshot(String snapshotId);

  /**
   * Polls until Cinder no longer knows the snapshot.
   *
   * @throws CinderException.UnexpectedState when it reaches {@code error_deleting}, when its
   *     backend keeps it ({@code available} again: on RBD a volume made from it depends on it), or
   *     when the deadline passes
   */
  void awaitSnapshotDeleted(String snapshotId, Backoff backoff);

  /**
   * Starts a backup of the volume, {@code available} or {@code in-use} (crash-consistent: nothing
   * quiesces the filesystem), kept by Cinder's backup service apart from the volume's backend. The
   * metadata is written from microversion 3.43 on, and dropped below it.
   */
  Backup createBackup(BackupSpec spec);

  /** The backup, or empty when Cinder does not know it. */
  Optional<Backup> getBackup(String backupId);

  /**
   * Backups whose name is {@code name} (when not null) and whose metadata contains every entry of
   * {@code metadata}: the look-up before a backup is made. Cinder filters backups by name only; the
   * metadata is compared here.
   */
  List<Backup> findBackups(String name, Map<String, String> metadata);

  /**
   * Polls until the backup's status is one of {@code wanted}, with exponential backoff.
   *
   * @throws CinderException.UnexpectedState when it reaches an {@code error} status (with Cinder's
   *     reason) or when the deadline passes
   * @throws CinderException.NotFound when the backup disappears
   */
  Backup awaitBackupStatus(String backupId, Set<String> wanted, Backoff backoff);

  /**
   * Sets these entries of the backup's metadata and keeps the others (from microversion 3.43, which
   * first keeps backup metadata). Cinder replaces a backup's metadata whole, so it is read first:
   * two writers at once may lose one's entry.
   *
   * @throws CinderException.Unsupported below 3.43
   */
  void updateBackupMetadata(String backupId, Map<String, String> metadata);

  /** Starts deleting the backup. One that is already gone counts as deleted. */
  void deleteBackup(String backupId);

  /**
   * Polls until Cinder no longer knows the backup.
   *
   * @throws CinderException.UnexpectedState when it reaches {@code error_deleting} or when the
   *     deadline passes
   */
  void awaitBackupDeleted(String backupId, Backoff backoff);

  /** The scheduler's pools with their capacity (needs an admin role). */
  List<Pool> pools();

  /** Releases connections and threads. */
  @Override
  void close();
}
