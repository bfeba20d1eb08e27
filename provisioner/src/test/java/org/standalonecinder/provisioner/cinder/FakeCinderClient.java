package org.standalonecinder.provisioner.cinder;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * An in-memory Cinder: the one test fake of {@link CinderClient}. It logs every call as {@code "op
 * target"} (ids are {@code vol-1}, {@code att-1}...), and fails the calls a test names, so a test
 * can assert the exact sequence of calls, rollback included, and that nothing is left.
 */
public final class FakeCinderClient implements CinderClient {

  private final Map<String, Volume> volumes = new LinkedHashMap<>();
  private final FakeSnapshots snapshots = new FakeSnapshots();
  private final FakeBackups backups = new FakeBackups();
  private final Map<String, String> backingUp = new java.util.HashMap<>();
  private final Map<String, String> restoring = new java.util.HashMap<>();
  private final Map<String, String> attachments = new HashMap<>();
  private final Map<String, Connector> connectors = new HashMap<>();
  private final Map<String, String> modes = new HashMap<>();
  private final List<String> log = Collections.synchronizedList(new ArrayList<>());
  private final Map<String, List<Supplier<RuntimeException>>> failures = new HashMap<>();
  private final AtomicInteger ids = new AtomicInteger();
  private Microversion version = Microversion.NEWEST_KNOWN;
  private Map<String, Object> exportData = defaultExport();
  private String exportType = "iscsi";
  private boolean multiattachTypes = false;
  private final Set<String> unscheduled = new java.util.HashSet<>();
  private final Set<String> held = new java.util.HashSet<>();
  private boolean holdNew;
  private final List<java.time.Duration> waits = new ArrayList<>();

  /** A valid iSCSI export with CHAP, like the local Cinder's. */
  public static Map<String, Object> defaultExport() {
    Map<String, Object> d = new LinkedHashMap<>();
    d.put("target_portal", "127.0.0.1:3260");
    d.put("target_iqn", "iqn.2010-10.org.openstack:volume-x");
    d.put("target_lun", 1);
    d.put("auth_method", "CHAP");
    d.put("auth_username", "chap-user");
    d.put("auth_password", "chap-secret");
    d.put("access_mode", "rw");
    d.put("encrypted", false);
    return d;
  }

  /**
   * The next call of {@code op} throws what {@code error} makes (calls queue up in order); a
   * supplier that returns null lets that call through.
   */
  public synchronized FakeCinderClient failNext(String op, Supplier<RuntimeException> error) {
    failures.computeIfAbsent(op, k -> new ArrayList<>()).add(error);
    return this;
  }

  public synchronized FakeCinderClient microversion(Microversion v) {
    this.version = v;
    return this;
  }

  public synchronized FakeCinderClient export(String type, Map<String, Object> data) {
    this.exportType = type;
    this.exportData = data;
    return this;
  }

  public synchronized FakeCinderClient multiattachTypes(boolean yes) {
    this.multiattachTypes = yes;
    return this;
  }

  /** Adds a volume as if an earlier attempt had made it. */
  public synchronized Volume seed(Volume v) {
    volumes.put(v.id(), v);
    v.attachmentIds().forEach(a -> attachments.put(a, v.id()));
    return v;
  }

  /** Sets a volume's status, as Cinder's volume service would. */
  public synchronized void setStatus(String volumeId, String status) {
    status(volumeId, status);
  }

  /**
   * Adds an attachment as a request of an earlier attempt that Cinder was still carrying out would
   * (not logged: the test did not make this call).
   */
  public synchronized void lateAttachment(String volumeId, String attachmentId) {
    Volume v = existing(volumeId);
    attachments.put(attachmentId, volumeId);
    List<String> ids = new ArrayList<>(v.attachmentIds());
    ids.add(attachmentId);
    volumes.put(volumeId, copy(v, "attaching", ids));
  }

  /**
   * The volume stays {@code creating} for good, as one whose cast to the scheduler was lost: waits
   * for it time out, and a delete removes it at once, as Cinder does with a volume that has no
   * host.
   */
  public synchronized void neverScheduled(String volumeId) {
    existing(volumeId);
    unscheduled.add(volumeId);
  }

  /**
   * New volumes filled from something (a volume, a snapshot, a backup) stay {@code creating} until
   * {@link #finishMaking}, as a long copy keeps them, and a wait for one waits as the real client's
   * does (until it is made, or its deadline). Without this, Cinder has made a volume by the next
   * look at it.
   */
  public synchronized FakeCinderClient slowCopies() {
    holdNew = true;
    return this;
  }

  /**
   * Volumes, snapshots and backups asked to be deleted stay {@code deleting} until {@link
   * #finishDeleting}, as a large backup's chunks keep them, a second delete is refused (400) as
   * Cinder's is, and a wait for one waits as the real client's does (until it is gone, or its
   * deadline).
   */
  public synchronized FakeCinderClient slowDeletes() {
    slowDeletes = true;
    return this;
  }

  /** Cinder has deleted the volume, snapshot or backup it was deleting. */
  public synchronized void finishDeleting(String id) {
    snapshots.delete(id);
    backups.delete(id);
    volumes.remove(id);
    notifyAll();
  }

  private boolean slowDeletes;

  /**
   * Cinder's backend refused the delete it was doing: the volume, snapshot or backup is {@code
   * available} again (as an RBD image a clone depends on comes back).
   */
  public synchronized void refuseDeleting(String id) {
    if (volumes.containsKey(id)) {
      status(id, "available");
    } else if (snapshots.get(id).isPresent()) {
      snapshots.status(id, "available");
    } else if (backups.get(id).isPresent()) {
      backups.status(id, "available", null);
    }
    notifyAll();
  }

  /** Cinder dropped the extend: the volume is back to what it was, at its old size. */
  public synchronized void dropExtending(String volumeId) {
    if (extending.remove(volumeId) != null) {
      status(volumeId, extendedFrom.remove(volumeId));
    }
  }

  /** Volumes being extended, slowly, to these sizes. */
  private final Map<String, Integer> extending = new HashMap<>();

  private final Map<String, String> extendedFrom = new HashMap<>();

  private boolean slowExtends;

  /**
   * Volumes asked to grow stay {@code extending} at their old size until {@link #finishExtending}.
   */
  public synchronized FakeCinderClient slowExtends() {
    slowExtends = true;
    return this;
  }

  /** Cinder's backend has grown the volume: it is back to what it was, at its new size. */
  public synchronized void finishExtending(String volumeId) {
    Integer size = extending.remove(volumeId);
    if (size != null) {
      Volume v = existing(volumeId);
      volumes.put(volumeId, resized(v, size, v.metadata()));
      status(volumeId, extendedFrom.remove(volumeId));
    }
  }

  /** Waits as the real client does until {@code gone}, or the deadline (then returns). */
  private void awaitGone(java.util.function.BooleanSupplier gone, Backoff b) {
    long end = System.nanoTime() + b.deadline().toNanos();
    while (slowDeletes && !gone.getAsBoolean()) {
      long left = (end - System.nanoTime()) / 1_000_000;
      if (left <= 0) {
        return;
      }
      try {
        wait(left);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** What Cinder's API refuses: a description or a metadata value past 255 characters. */
  private static void fits(String description, Map<String, String> metadata) {
    boolean over =
        (description != null && description.length() > CinderText.MAX)
            || metadata.values().stream().anyMatch(v -> v != null && v.length() > CinderText.MAX);
    if (over) {
      throw new CinderException.BadRequest(
          "Invalid input received: a description or metadata value past 255 characters",
          400,
          "req-fake");
    }
  }

  /** A delete of {@code status}: refused while being deleted, as Cinder refuses a second one. */
  private static void deletable(String what, String id, String status) {
    if (status.equals("deleting")) {
      throw new CinderException.BadRequest(
          "Invalid " + what + ": " + what + " status must be available or error", 400, "req-fake");
    }
  }

  /** Cinder goes on making the volume (as it is) until {@link #finishMaking}. */
  public synchronized void stillMaking(String volumeId) {
    existing(volumeId);
    held.add(volumeId);
  }

  /**
   * Cinder failed to make (fill) the volume: it goes to {@code error}, as a failed copy does, and a
   * backup it was restored from is free again.
   */
  public synchronized void failMaking(String volumeId) {
    held.remove(volumeId);
    status(volumeId, "error");
    String backupId = restoring.remove(volumeId);
    if (backupId != null) {
      backups.status(backupId, "available", null);
    }
    notifyAll();
  }

  /**
   * Cinder's backup service has written the backup into the volume and its source's metadata over
   * the volume's, and not yet {@code src_backup_id}: the volume is still being made ({@code
   * failed}: the restore failed there, {@code error}).
   */
  public synchronized void restoredHalfway(String volumeId, boolean failed) {
    String backupId = restoring.get(volumeId);
    Map<String, String> meta = new java.util.LinkedHashMap<>(backups.restoredMetadata(backupId));
    meta.remove("src_backup_id");
    Volume v = existing(volumeId);
    volumes.put(volumeId, resized(v, v.sizeGib(), meta));
    if (failed) {
      failMaking(volumeId);
    }
  }

  /** Cinder has made (filled) the volume: the next look sees it {@code available}. */
  public synchronized void finishMaking(String volumeId) {
    held.remove(volumeId);
    notifyAll();
  }

  /** Cinder makes a volume between two looks at it, unless it is held or never scheduled. */
  private void progress(String volumeId) {
    Volume v = volumes.get(volumeId);
    if (v != null
        && v.status().equals("creating")
        && !unscheduled.contains(volumeId)
        && !held.contains(volumeId)) {
      status(volumeId, "available");
      restored(volumeId);
    }
  }

  /** The deadlines of the waits for a status, in order. */
  public synchronized List<java.time.Duration> waits() {
    return List.copyOf(waits);
  }

  /** Adds a line to the call log, for fakes of other systems that share it. */
  public void note(String line) {
    log.add(line);
  }

  public List<String> log() {
    synchronized (log) {
      return List.copyOf(log);
    }
  }

  public synchronized void clearLog() {
    log.clear();
  }

  public synchronized Map<String, Volume> volumes() {
    return Map.copyOf(volumes);
  }

  public synchronized Map<String, String> attachments() {
    return Map.copyOf(attachments);
  }

  private synchronized void call(String op, String target) {
    log.add(op + " " + target);
    List<Supplier<RuntimeException>> f = failures.get(op);
    if (f != null && !f.isEmpty()) {
      RuntimeException e = f.remove(0).get();
      if (e != null) {
        throw e;
      }
    }
  }

  private Volume existing(String id) {
    Volume v = volumes.get(id);
    if (v == null) {
      throw new CinderException.NotFound("Volume " + id + " could not be found.", "req-fake");
    }
    return v;
  }

  private synchronized void status(String id, String status) {
    Volume v = existing(id);
    volumes.put(id, copy(v, status, v.attachmentIds()));
  }

  private Volume copy(Volume v, String status, List<String> attachmentIds) {
    Map<String, String> hosts = new LinkedHashMap<>(v.attachedHosts());
    hosts.keySet().retainAll(attachmentIds);
    return copy(v, status, attachmentIds, hosts);
  }

  private static Volume copy(
      Volume v, String status, List<String> attachmentIds, Map<String, String> hosts) {
    return new Volume(
        v.id(),
        v.name(),
        status,
        v.sizeGib(),
        v.availabilityZone(),
        v.volumeType(),
        v.metadata(),
        v.sourceVolumeId(),
        v.snapshotId(),
        v.multiattach(),
        attachmentIds,
        hosts,
        v.createdAt());
  }

  /** The volume with another size and metadata, the rest as it is. */
  private static Volume resized(Volume v, int sizeGib, Map<String, String> metadata) {
    return new Volume(
        v.id(),
        v.name(),
        v.status(),
        sizeGib,
        v.availabilityZone(),
        v.volumeType(),
        metadata,
        v.sourceVolumeId(),
        v.snapshotId(),
        v.multiattach(),
        v.attachmentIds(),
        v.attachedHosts(),
        v.createdAt());
  }

  /** The volume with {@code attachmentId} listed as attached to {@code host}. */
  private void attachedTo(String volumeId, String attachmentId, String host) {
    Volume v = existing(volumeId);
    Map<String, String> hosts = new LinkedHashMap<>(v.attachedHosts());
    if (host != null) {
      hosts.put(attachmentId, host);
    }
    List<String> ids = new ArrayList<>(v.attachmentIds());
    if (!ids.contains(attachmentId)) {
      ids.add(attachmentId);
    }
    volumes.put(volumeId, copy(v, "in-use", ids, hosts));
  }

  /** The mode ({@code rw} or {@code ro}) each attachment was made with. */
  public synchronized Map<String, String> modes() {
    return Map.copyOf(modes);
  }

  @Override
  public synchronized ApiVersions apiVersions() {
    return new ApiVersions(Microversion.BASE, version, version);
  }

  @Override
  public synchronized Volume createVolume(VolumeSpec spec) {
    call("createVolume", spec.name());
    fits(spec.description(), spec.metadata());
    if (spec.sourceVolumeId() != null) {
      // What the real Cinder checks of a clone (see CinderClientIT).
      Volume src = volumes.get(spec.sourceVolumeId());
      if (src == null) {
        throw new CinderException.NotFound(
            "Volume " + spec.sourceVolumeId() + " could not be found.", "req-fake");
      }
      if (spec.sizeGib() < src.sizeGib()) {
        throw new CinderException.BadRequest(
            "Invalid input received: Clones currently must be >= original volume size.",
            400,
            "req-fake");
      }
      if (spec.availabilityZone() != null
          && !spec.availabilityZone().equals(src.availabilityZone())) {
        throw new CinderException.BadRequest(
            "Invalid input received: Volume must be in the same availability zone as the source"
                + " volume",
            400,
            "req-fake");
      }
    }
    if (spec.snapshotId() != null) {
      Snapshot from = snapshots.existing(spec.snapshotId());
      if (spec.sizeGib() < from.sizeGib()) {
        throw new CinderException.BadRequest(
            "Invalid input received: Volume size '"
                + spec.sizeGib()
                + "'GB cannot be smaller than the snapshot size "
                + from.sizeGib()
                + "GB. They must be >= original snapshot size.",
            400,
            "req-fake");
      }
    }
    Map<String, String> metadata = spec.metadata();
    if (spec.backupId() != null) {
      Backup from = backups.existing(spec.backupId());
      if (spec.sizeGib() < from.sizeGib()) {
        throw new CinderException.BadRequest(
            "Invalid input received: Volume size "
                + spec.sizeGib()
                + "GB cannot be smaller than the backup size "
                + from.sizeGib()
                + "GB. It must be >= backup size.",
            400,
            "req-fake");
      }
      if (!from.status().equals("available") || restoring.containsValue(from.id())) {
        // Cinder's backup service restores from one backup at a time (status restoring)
        throw new CinderException.BadRequest(
            "Invalid input received: Originating backup status must be one of 'available' values",
            400,
            "req-fake");
      }
      metadata = new java.util.LinkedHashMap<>(metadata);
      metadata.put("src_backup_id", from.id());
    }
    String id = "vol-" + ids.incrementAndGet();
    Volume v =
        new Volume(
            id,
            spec.name(),
            "creating",
            spec.sizeGib(),
            spec.availabilityZone() == null ? "nova" : spec.availabilityZone(),
            spec.volumeType() == null ? "__DEFAULT__" : spec.volumeType(),
            metadata,
            spec.sourceVolumeId(),
            spec.snapshotId(),
            multiattachTypes,
            List.of(),
            Map.of(),
            java.time.Instant.now());
    volumes.put(id, v);
    if (spec.backupId() != null) {
      // Cinder's backup service reads one backup for one restore at a time, and says so.
      restoring.put(id, spec.backupId());
      backups.status(spec.backupId(), "restoring", null);
    }
    if (holdNew
        && (spec.sourceVolumeId() != null
            || spec.snapshotId() != null
            || spec.backupId() != null)) {
      held.add(id);
    }
    return v;
  }

  @Override
  public synchronized Optional<Volume> getVolume(String volumeId) {
    call("getVolume", volumeId);
    progress(volumeId);
    return Optional.ofNullable(volumes.get(volumeId));
  }

  @Override
  public synchronized List<Volume> findVolumes(String name, Map<String, String> metadata) {
    call("findVolumes", name);
    // Cinder makes what the caller looks at between its looks; other volumes are not looked at.
    volumes.values().stream()
        .filter(v -> name == null || name.equals(v.name()))
        .map(Volume::id)
        .toList()
        .forEach(this::progress);
    return volumes.values().stream()
        .filter(v -> name == null || name.equals(v.name()))
        .filter(v -> v.metadata().entrySet().containsAll(metadata.entrySet()))
        .toList();
  }

  @Override
  public synchronized Volume awaitVolumeStatus(String volumeId, Set<String> wanted, Backoff b) {
    waits.add(b.deadline());
    call("awaitVolumeStatus", volumeId);
    existing(volumeId);
    long end = System.nanoTime() + b.deadline().toNanos();
    while (held.contains(volumeId) && System.nanoTime() < end) {
      try {
        wait(Math.max(1, Math.min(100, (end - System.nanoTime()) / 1_000_000)));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new CinderException.Unavailable("interrupted", 0, null, e);
      }
    }
    progress(volumeId);
    Volume v = existing(volumeId);
    if (!wanted.contains(v.status())) {
      // as the real one: an error status ends the wait, any other runs into the deadline
      throw new CinderException.UnexpectedState(
          "volume " + volumeId + " is " + v.status(), v.status(), !v.status().startsWith("error"));
    }
    return v;
  }

  @Override
  public synchronized void awaitVolumeDeleted(String volumeId, Backoff b) {
    call("awaitVolumeDeleted", volumeId);
    awaitGone(() -> !volumes.containsKey(volumeId), b);
  }

  @Override
  public synchronized void updateVolumeMetadata(String volumeId, Map<String, String> metadata) {
    call("updateVolumeMetadata", volumeId);
    fits(null, metadata);
    Volume v = existing(volumeId);
    Map<String, String> merged = new java.util.LinkedHashMap<>(v.metadata());
    merged.putAll(metadata);
    volumes.put(volumeId, resized(v, v.sizeGib(), merged));
  }

  @Override
  public synchronized void deleteVolume(String volumeId) {
    call("deleteVolume", volumeId);
    Volume v = volumes.get(volumeId);
    if (v == null) {
      return;
    }
    if (unscheduled.remove(volumeId)) {
      volumes.remove(volumeId);
      return;
    }
    // Cinder says the same for a status it refuses and for snapshots it keeps the volume for.
    if ((!v.status().equals("available") && !v.status().startsWith("error"))
        || snapshots.any(volumeId)) {
      throw new CinderException.BadRequest(
          "Invalid volume: Volume status must be available or error or error_restoring or"
              + " error_extending or error_managing and must not be migrating, attached, belong to"
              + " a group, have snapshots, awaiting a transfer, or be disassociated from snapshots"
              + " after volume transfer.",
          400,
          "req-fake");
    }
    if (slowDeletes) {
      status(volumeId, "deleting");
      return;
    }
    volumes.remove(volumeId);
  }

  @Override
  public synchronized void extendVolume(String volumeId, int newSizeGib) {
    call("extendVolume", volumeId);
    Volume v = existing(volumeId);
    // Cinder's own checks, in its words
    boolean inUse = v.status().equals("in-use");
    if (!v.status().equals("available")
        && !(inUse && version.atLeast(Microversion.EXTEND_IN_USE))) {
      throw new CinderException.BadRequest(
          "Invalid volume: Volume "
              + volumeId
              + " status must be '{'status': 'available'}' to extend, currently "
              + v.status()
              + ".",
          400,
          "req-fake");
    }
    if (newSizeGib <= v.sizeGib()) {
      throw new CinderException.BadRequest(
          "Invalid input received: New size for extend must be greater than current size.",
          400,
          "req-fake");
    }
    if (slowExtends) {
      extending.put(volumeId, newSizeGib);
      extendedFrom.put(volumeId, v.status());
      status(volumeId, "extending");
      return;
    }
    volumes.put(volumeId, resized(v, newSizeGib, v.metadata()));
  }

  @Override
  public synchronized void reserve(String volumeId) {
    call("reserve", volumeId);
    if (!existing(volumeId).status().equals("available")) {
      throw new CinderException.BadRequest("Volume status must be available to reserve", 400, null);
    }
    status(volumeId, "attaching");
  }

  @Override
  public synchronized void unreserve(String volumeId) {
    call("unreserve", volumeId);
    if (existing(volumeId).status().equals("attaching")) {
      status(volumeId, "available");
    }
  }

  @Override
  public synchronized void resetToAvailable(String volumeId) {
    call("resetToAvailable", volumeId);
    existing(volumeId);
    // attach_status detached: Cinder deletes the volume's attachment records
    attachments.values().removeIf(volumeId::equals);
    volumes.put(volumeId, copy(existing(volumeId), "available", List.of()));
  }

  @Override
  public synchronized ConnectionInfo initializeConnection(String volumeId, Connector connector) {
    call("initializeConnection", volumeId);
    existing(volumeId);
    return new ConnectionInfo(exportType, exportData);
  }

  @Override
  public synchronized void terminateConnection(String volumeId, Connector connector) {
    call("terminateConnection", volumeId);
    existing(volumeId);
    terminatedWith.add(connector);
  }

  private final List<Connector> terminatedWith = new ArrayList<>();

  /** The connectors of every terminateConnection, in order. */
  public synchronized List<Connector> terminatedWith() {
    return List.copyOf(terminatedWith);
  }

  @Override
  public synchronized Attachment createAttachment(
      String volumeId, Connector connector, boolean readOnly) {
    call("createAttachment", volumeId);
    if (!version.atLeast(Microversion.ATTACHMENTS)
        || (readOnly && !version.atLeast(Microversion.ATTACH_MODE))) {
      throw new CinderException.Unsupported("the server is at " + version, 0, null);
    }
    Volume v = existing(volumeId);
    // Cinder's reservation: a volume in use by someone else only when it is multiattach
    if (!v.status().equals("available") && !(v.multiattach() && v.status().equals("in-use"))) {
      throw new CinderException.BadRequest(
          "Invalid volume: Volume " + volumeId + " status must be available or downloading",
          400,
          "req-fake");
    }
    String id = "att-" + ids.incrementAndGet();
    attachments.put(id, volumeId);
    connectors.put(id, connector);
    modes.put(id, readOnly ? "ro" : "rw");
    List<String> ids = new ArrayList<>(v.attachmentIds());
    ids.add(id);
    volumes.put(volumeId, copy(v, v.status().equals("in-use") ? "in-use" : "attaching", ids));
    return new Attachment(
        id,
        volumeId,
        "reserved",
        new ConnectionInfo(exportType, exportData),
        readOnly ? "ro" : "rw");
  }

  @Override
  public synchronized Optional<Attachment> getAttachment(String attachmentId) {
    call("getAttachment", attachmentId);
    String vol = attachments.get(attachmentId);
    return vol == null
        ? Optional.empty()
        : Optional.of(
            new Attachment(
                attachmentId,
                vol,
                "attached",
                new ConnectionInfo(exportType, exportData),
                modes.get(attachmentId)));
  }

  @Override
  public synchronized void markAttached(
      String volumeId, String hostName, String mountpoint, boolean readOnly) {
    call("markAttached", volumeId);
    if (!existing(volumeId).status().equals("attaching")) {
      throw new CinderException.BadRequest("Volume status must be attaching", 400, "req-fake");
    }
    String id = "att-" + ids.incrementAndGet();
    attachments.put(id, volumeId);
    modes.put(id, readOnly ? "ro" : "rw");
    attachedTo(volumeId, id, hostName);
  }

  @Override
  public synchronized void markDetached(String volumeId, String attachmentId) {
    call("markDetached", volumeId);
    if (!volumeId.equals(attachments.get(attachmentId))) {
      // what the real Cinder answers for an attachment it does not know
      throw new CinderException.Conflict(
          "ConflictNovaUsingAttachment: Detach volume from instance  using the Compute API",
          "req-fake");
    }
    deleteAttachmentRecord(attachmentId);
  }

  @Override
  public synchronized List<Attachment> listAttachments(String volumeId) {
    call("listAttachments", volumeId);
    if (!version.atLeast(Microversion.ATTACHMENTS)) {
      return List.of();
    }
    return attachments.entrySet().stream()
        .filter(e -> e.getValue().equals(volumeId))
        .map(e -> new Attachment(e.getKey(), volumeId, "attaching", null, modes.get(e.getKey())))
        .sorted(java.util.Comparator.comparing(Attachment::id))
        .toList();
  }

  @Override
  public synchronized void completeAttachment(String attachmentId) {
    call("completeAttachment", attachmentId);
    String vol = attachments.get(attachmentId);
    if (vol == null) {
      throw new CinderException.NotFound("attachment " + attachmentId, null);
    }
    Connector c = connectors.get(attachmentId);
    attachedTo(vol, attachmentId, c == null ? null : c.host());
  }

  @Override
  public synchronized void deleteAttachment(String attachmentId) {
    call("deleteAttachment", attachmentId);
    deleteAttachmentRecord(attachmentId);
  }

  private void deleteAttachmentRecord(String attachmentId) {
    String vol = attachments.remove(attachmentId);
    if (vol != null && volumes.containsKey(vol)) {
      Volume v = volumes.get(vol);
      List<String> ids = new ArrayList<>(v.attachmentIds());
      ids.remove(attachmentId);
      volumes.put(vol, copy(v, ids.isEmpty() ? "available" : v.status(), ids));
    }
  }

  private List<Pool> pools =
      List.of(
          new Pool(
              "fake@fake#fake", "fake", "iSCSI", new Capacity.Infinite(), new Capacity.Infinite()));

  /** What {@link #pools()} answers from now on. */
  public synchronized FakeCinderClient pools(List<Pool> now) {
    this.pools = List.copyOf(now);
    return this;
  }

  @Override
  public synchronized List<Pool> pools() {
    call("pools", "");
    return pools;
  }

  @Override
  public synchronized Snapshot createSnapshot(SnapshotSpec spec) {
    call("createSnapshot", spec.name());
    fits(spec.description(), spec.metadata());
    return snapshots.create(spec, existing(spec.volumeId()));
  }

  @Override
  public synchronized Optional<Snapshot> getSnapshot(String snapshotId) {
    call("getSnapshot", snapshotId);
    return snapshots.get(snapshotId);
  }

  @Override
  public synchronized List<Snapshot> findSnapshots(String name, Map<String, String> metadata) {
    call("findSnapshots", name);
    return snapshots.find(name, metadata);
  }

  @Override
  public synchronized Snapshot awaitSnapshotStatus(
      String snapshotId, Set<String> wanted, Backoff b) {
    waits.add(b.deadline());
    call("awaitSnapshotStatus", snapshotId);
    return snapshots.await(snapshotId, wanted);
  }

  @Override
  public synchronized void updateSnapshotMetadata(String snapshotId, Map<String, String> metadata) {
    call("updateSnapshotMetadata", snapshotId);
    fits(null, metadata);
    snapshots.metadata(snapshotId, metadata);
  }

  @Override
  public synchronized void deleteSnapshot(String snapshotId) {
    call("deleteSnapshot", snapshotId);
    Snapshot s = snapshots.get(snapshotId).orElse(null);
    if (slowDeletes && s != null) {
      deletable("snapshot", snapshotId, s.status());
      snapshots.status(snapshotId, "deleting");
      return;
    }
    snapshots.delete(snapshotId);
  }

  @Override
  public synchronized void awaitSnapshotDeleted(String snapshotId, Backoff b) {
    call("awaitSnapshotDeleted", snapshotId);
    awaitGone(() -> snapshots.get(snapshotId).isEmpty(), b);
  }

  @Override
  public synchronized Backup createBackup(BackupSpec spec) {
    call("createBackup", spec.name());
    fits(spec.description(), spec.metadata());
    Volume v = existing(spec.volumeId());
    Backup b = backups.create(spec, v);
    // As Cinder: the volume is backing-up until its backup is made, then back to what it was.
    backingUp.put(b.id(), v.status());
    status(v.id(), "backing-up");
    return b;
  }

  @Override
  public synchronized Optional<Backup> getBackup(String backupId) {
    call("getBackup", backupId);
    return backups.get(backupId);
  }

  @Override
  public synchronized List<Backup> findBackups(String name, Map<String, String> metadata) {
    call("findBackups", name);
    return backups.find(name, metadata);
  }

  @Override
  public synchronized Backup awaitBackupStatus(String backupId, Set<String> wanted, Backoff b) {
    waits.add(b.deadline());
    call("awaitBackupStatus", backupId);
    try {
      return backups.await(backupId, wanted);
    } finally {
      backedUp(backupId);
    }
  }

  @Override
  public synchronized void updateBackupMetadata(String backupId, Map<String, String> metadata) {
    call("updateBackupMetadata", backupId);
    fits(null, metadata);
    backups.metadata(backupId, metadata);
  }

  @Override
  public synchronized void deleteBackup(String backupId) {
    call("deleteBackup", backupId);
    Backup found = backups.get(backupId).orElse(null);
    if (slowDeletes && found != null) {
      deletable("backup", backupId, found.status());
      backups.status(backupId, "deleting", null);
      return;
    }
    backups.delete(backupId);
  }

  @Override
  public synchronized void awaitBackupDeleted(String backupId, Backoff b) {
    call("awaitBackupDeleted", backupId);
    awaitGone(() -> backups.get(backupId).isEmpty(), b);
  }

  /** Sets a backup's status (and why), as Cinder's backup service would. */
  public synchronized void setBackupStatus(String backupId, String status, String failReason) {
    backups.status(backupId, status, failReason);
    backedUp(backupId);
  }

  /** A volume the backup service has written a backup into: its metadata is the source's. */
  private void restored(String volumeId) {
    String backupId = restoring.remove(volumeId);
    if (backupId == null) {
      return;
    }
    backups.status(backupId, "available", null);
    Volume v = existing(volumeId);
    Map<String, String> meta = backups.restoredMetadata(backupId);
    volumes.put(volumeId, resized(v, v.sizeGib(), meta));
  }

  /** The volume of a backup no longer being made goes back to the status it had. */
  private void backedUp(String backupId) {
    Backup b = backups.get(backupId).orElse(null);
    if (b == null || b.status().equals("creating") || !backingUp.containsKey(backupId)) {
      return;
    }
    String was = backingUp.remove(backupId);
    if (volumes.containsKey(b.volumeId())) {
      status(b.volumeId(), was);
    }
  }

  public synchronized Map<String, Backup> backups() {
    return backups.all();
  }

  /** Sets a snapshot's status, as Cinder's volume service would. */
  public synchronized void setSnapshotStatus(String snapshotId, String status) {
    snapshots.status(snapshotId, status);
  }

  public synchronized Map<String, Snapshot> snapshots() {
    return snapshots.all();
  }

  @Override
  public void close() {}
}
