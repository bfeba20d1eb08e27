package org.standalonecinder.provisioner.cinder.openstack;

import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.standalonecinder.provisioner.cinder.ApiVersions;
import org.standalonecinder.provisioner.cinder.Attachment;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.Backup;
import org.standalonecinder.provisioner.cinder.BackupSpec;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.ConnectionInfo;
import org.standalonecinder.provisioner.cinder.Connector;
import org.standalonecinder.provisioner.cinder.Pool;
import org.standalonecinder.provisioner.cinder.Snapshot;
import org.standalonecinder.provisioner.cinder.SnapshotSpec;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.cinder.VolumeSpec;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig;

/**
 * The {@link CinderClient} on openstack4j: the only class family that imports the SDK.
 *
 * <p>What openstack4j lacks is closed in this package: the volume actions and the attachments API
 * are raw calls through its service base class, the microversion header is set on each session,
 * status codes are mapped to typed errors with Cinder's request id (its own handling turns a 404
 * into null and drops the id), and 401 is answered with one fresh authentication ({@link
 * CinderHttp}). The calls are grouped by concern: volumes ({@link VolumeCalls}), actions and
 * attachments ({@link AttachmentCalls}), snapshots ({@link SnapshotCalls}), backups ({@link
 * BackupCalls}) and pools ({@link PoolCalls}); this class only routes to them.
 */
public final class OpenStackCinderClient implements CinderClient {

  /** The log context key of the last Cinder request id of the calling thread. */
  public static final String MDC_REQUEST_ID = CinderHttp.MDC_REQUEST_ID;

  private final CinderHttp http;
  private final VolumeCalls volumes;
  private final AttachmentCalls attachments;
  private final SnapshotCalls snapshots;
  private final BackupCalls backups;
  private final PoolCalls pools;

  private OpenStackCinderClient(CinderHttp http) {
    this.http = http;
    Waiting waits = new Waiting();
    this.volumes = new VolumeCalls(http, waits);
    this.attachments = new AttachmentCalls(http);
    this.snapshots = new SnapshotCalls(http, waits);
    this.backups = new BackupCalls(http, waits);
    this.pools = new PoolCalls(http);
  }

  /** A client for the configured cloud. Nothing is sent until the first call. */
  public static OpenStackCinderClient create(CloudConfig cfg) {
    return create(cfg, Clock.systemUTC());
  }

  static OpenStackCinderClient create(CloudConfig cfg, Clock clock) {
    return new OpenStackCinderClient(new CinderHttp(cfg, clock));
  }

  /**
   * Authenticates (if needed) and returns the block-storage endpoint in use: what the catalog or
   * the noauth configuration gave. For diagnostics.
   */
  public java.net.URI endpoint() {
    return http.endpoint();
  }

  @Override
  public ApiVersions apiVersions() {
    return http.apiVersions();
  }

  @Override
  public Volume createVolume(VolumeSpec spec) {
    return volumes.createVolume(spec);
  }

  @Override
  public Optional<Volume> getVolume(String volumeId) {
    return volumes.getVolume(volumeId);
  }

  @Override
  public List<Volume> findVolumes(String name, Map<String, String> metadata) {
    return volumes.findVolumes(name, metadata);
  }

  @Override
  public Volume awaitVolumeStatus(String volumeId, Set<String> wanted, Backoff backoff) {
    return volumes.awaitVolumeStatus(volumeId, wanted, backoff);
  }

  @Override
  public void awaitVolumeDeleted(String volumeId, Backoff backoff) {
    volumes.awaitVolumeDeleted(volumeId, backoff);
  }

  @Override
  public void updateVolumeMetadata(String volumeId, Map<String, String> metadata) {
    volumes.updateVolumeMetadata(volumeId, metadata);
  }

  @Override
  public void deleteVolume(String volumeId) {
    volumes.deleteVolume(volumeId);
  }

  @Override
  public void extendVolume(String volumeId, int newSizeGib) {
    volumes.extendVolume(volumeId, newSizeGib);
  }

  @Override
  public void reserve(String volumeId) {
    attachments.reserve(volumeId);
  }

  @Override
  public void unreserve(String volumeId) {
    attachments.unreserve(volumeId);
  }

  @Override
  public void resetToAvailable(String volumeId) {
    attachments.resetToAvailable(volumeId);
  }

  @Override
  public ConnectionInfo initializeConnection(String volumeId, Connector connector) {
    return attachments.initializeConnection(volumeId, connector);
  }

  @Override
  public void terminateConnection(String volumeId, Connector connector) {
    attachments.terminateConnection(volumeId, connector);
  }

  @Override
  public Attachment createAttachment(String volumeId, Connector connector, boolean readOnly) {
    return attachments.createAttachment(volumeId, connector, readOnly);
  }

  @Override
  public Optional<Attachment> getAttachment(String attachmentId) {
    return attachments.getAttachment(attachmentId);
  }

  @Override
  public void markAttached(String volumeId, String hostName, String mountpoint, boolean readOnly) {
    attachments.markAttached(volumeId, hostName, mountpoint, readOnly);
  }

  @Override
  public void markDetached(String volumeId, String attachmentId) {
    attachments.markDetached(volumeId, attachmentId);
  }

  @Override
  public List<Attachment> listAttachments(String volumeId) {
    return attachments.listAttachments(volumeId);
  }

  @Override
  public void completeAttachment(String attachmentId) {
    attachments.completeAttachment(attachmentId);
  }

  @Override
  public void deleteAttachment(String attachmentId) {
    attachments.deleteAttachment(attachmentId);
  }

  @Override
  public Snapshot createSnapshot(SnapshotSpec spec) {
    return snapshots.createSnapshot(spec);
  }

  @Override
  public Optional<Snapshot> getSnapshot(String snapshotId) {
    return snapshots.getSnapshot(snapshotId);
  }

  @Override
  public List<Snapshot> findSnapshots(String name, Map<String, String> metadata) {
    return snapshots.findSnapshots(name, metadata);
  }

  @Override
  public Snapshot awaitSnapshotStatus(String snapshotId, Set<String> wanted, Backoff backoff) {
    return snapshots.awaitSnapshotStatus(snapshotId, wanted, backoff);
  }

  @Override
  public void updateSnapshotMetadata(String snapshotId, Map<String, String> metadata) {
    snapshots.updateSnapshotMetadata(snapshotId, metadata);
  }

  @Override
  public void deleteSnapshot(String snapshotId) {
    snapshots.deleteSnapshot(snapshotId);
  }

  @Override
  public void awaitSnapshotDeleted(String snapshotId, Backoff backoff) {
    snapshots.awaitSnapshotDeleted(snapshotId, backoff);
  }

  @Override
  public Backup createBackup(BackupSpec spec) {
    return backups.createBackup(spec);
  }

  @Override
  public Optional<Backup> getBackup(String backupId) {
    return backups.getBackup(backupId);
  }

  @Override
  public List<Backup> findBackups(String name, Map<String, String> metadata) {
    return backups.findBackups(name, metadata);
  }

  @Override
  public Backup awaitBackupStatus(String backupId, Set<String> wanted, Backoff backoff) {
    return backups.awaitBackupStatus(backupId, wanted, backoff);
  }

  @Override
  public void updateBackupMetadata(String backupId, Map<String, String> metadata) {
    backups.updateBackupMetadata(backupId, metadata);
  }

  @Override
  public void deleteBackup(String backupId) {
    backups.deleteBackup(backupId);
  }

  @Override
  public void awaitBackupDeleted(String backupId, Backoff backoff) {
    backups.awaitBackupDeleted(backupId, backoff);
  }

  @Override
  public List<Pool> pools() {
    return pools.pools();
  }

  @Override
  public void close() {
    http.close();
  }
}
