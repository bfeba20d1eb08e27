package org.standalonecinder.provisioner.snapshot;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.Snapshot;
import org.standalonecinder.provisioner.cinder.SnapshotSpec;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.provision.Names;

/**
 * The part a CSI driver's snapshotter sidecar plays, for the {@code VolumeSnapshotContent}s of this
 * provisioner's driver: takes the Cinder snapshot a dynamic content asks for, reads the one a
 * pre-provisioned content names, writes what it found to the content's status (which the
 * snapshot-controller copies to the {@code VolumeSnapshot}), and deletes the Cinder snapshot when
 * the content goes under the {@code Delete} policy.
 *
 * <p>A Cinder snapshot is named after its content and carries the cluster's id and the content's
 * name in its metadata: taking one looks it up first, so a retry or a restart after a crash never
 * takes a second. While it is being taken, the content carries the being-created annotation, so the
 * snapshot-controller does not delete the content and lose track of it.
 */
final class ContentSync {

  private static final Logger LOG = LoggerFactory.getLogger(ContentSync.class);

  /** How soon a snapshot still being taken is looked at again, by default. */
  static final Duration POLL = Duration.ofSeconds(2);

  private static final long GIB = 1L << 30;

  private final ContentWrites writes;
  private final CinderClient cinder;
  private final String driver;
  private final String clusterId;
  private final Backoff deletion;
  private final Duration poll;
  private final Clock clock;
  private final SnapshotMetrics metrics;

  ContentSync(
      ContentWrites writes,
      CinderClient cinder,
      String driver,
      String clusterId,
      Backoff deletion,
      Duration poll,
      Clock clock,
      SnapshotMetrics metrics) {
    this.metrics = metrics;
    this.writes = writes;
    this.cinder = cinder;
    this.driver = driver;
    this.clusterId = clusterId;
    this.deletion = deletion;
    this.poll = poll;
    this.clock = clock;
  }

  /** Whether the content is this provisioner's to serve. */
  boolean ours(GenericKubernetesResource raw) {
    return driver.equals(Content.of(raw).driver());
  }

  /**
   * Brings the content one step on.
   *
   * @return when to look again (a snapshot still being taken), or empty
   * @throws ProvisioningException when a step failed, with whether retrying can help
   */
  Optional<Duration> sync(GenericKubernetesResource raw) {
    Content c = Content.of(raw);
    if (!driver.equals(c.driver())) {
      return Optional.empty();
    }
    if (c.toDelete()) {
      delete(c);
      return Optional.empty();
    }
    if (c.dynamic()) {
      return take(c);
    }
    if (c.snapshotHandle() != null) {
      return read(c);
    }
    return Optional.empty();
  }

  /** Takes the snapshot of a dynamic content, or follows the one taken. */
  private Optional<Duration> take(Content c) {
    if (c.status() != null && c.status().readyToUse()) {
      if (c.beingCreated()) {
        writes.annotate(c, SnapshotApi.BEING_CREATED, null);
      }
      return Optional.empty();
    }
    Snapshot s = found(c);
    if (s == null) {
      if (c.status() != null && c.status().snapshotHandle() != null) {
        // Recorded, then gone from Cinder: someone deleted it there. Not taken again: the data
        // would be of now, not of when the user asked.
        throw failed(
            c,
            "Cinder snapshot "
                + c.status().snapshotHandle()
                + " recorded for this content no longer exists",
            true);
      }
      checkVolume(c);
      if (!c.beingCreated()) {
        c = Content.of(mark(c));
      }
      try {
        s = cinder.createSnapshot(spec(c));
      } catch (CinderException e) {
        throw failed(
            c, "cannot snapshot volume " + c.volumeHandle() + ": " + e.getMessage(), false);
      }
      LOG.info(
          "content {}: took Cinder snapshot {} of volume {}", c.name(), s.id(), c.volumeHandle());
    }
    return record(c, s);
  }

  /** Reads the existing snapshot a pre-provisioned content names. */
  private Optional<Duration> read(Content c) {
    if (c.status() != null && c.status().readyToUse()) {
      return Optional.empty();
    }
    Snapshot s = cinder.getSnapshot(c.snapshotHandle()).orElse(null);
    if (s == null) {
      throw failed(c, "Cinder has no snapshot " + c.snapshotHandle(), false);
    }
    return record(c, s);
  }

  /** Writes what Cinder says of the snapshot; when to look again while it is being taken. */
  private Optional<Duration> record(Content c, Snapshot s) {
    String error = null;
    boolean ready = "available".equals(s.status());
    if (s.status().startsWith("error")) {
      error = "Cinder snapshot " + s.id() + " is in status " + s.status();
    }
    Content after = c;
    Content.Status was = c.status();
    boolean same =
        was != null
            && s.id().equals(was.snapshotHandle())
            && was.readyToUse() == ready
            && java.util.Objects.equals(was.error(), error);
    if (!same) {
      // Written only when it changes: a snapshot polled while Cinder takes it costs no write.
      after =
          Content.of(
              writes.status(
                  c,
                  s.id(),
                  ready,
                  s.createdAt() == null ? clock.instant() : s.createdAt(),
                  s.sizeGib() * GIB,
                  error,
                  clock.instant()));
    }
    if (error != null || ready) {
      // Cinder has answered for good: nothing in flight any more.
      if (after.beingCreated()) {
        writes.annotate(after, SnapshotApi.BEING_CREATED, null);
      }
    }
    if (error != null) {
      throw new ProvisioningException(error, true, null).toldAs(SnapshotController.CREATION_FAILED);
    }
    if (ready) {
      metrics.succeeded(c.dynamic() ? SnapshotMetrics.TAKE : SnapshotMetrics.IMPORT);
    }
    return ready ? Optional.empty() : Optional.of(poll);
  }

  /** The snapshot taken for the content, when one was (by its name and metadata). */
  private Snapshot found(Content c) {
    String handle = c.status() == null ? null : c.status().snapshotHandle();
    if (handle != null) {
      return cinder.getSnapshot(handle).orElse(null);
    }
    List<Snapshot> all = cinder.findSnapshots(c.name(), identifying(c.name()));
    return all.isEmpty() ? null : all.get(0);
  }

  /**
   * Only volumes this cluster's provisioner made are snapshotted: a content names its volume by id,
   * and one made by the snapshot-controller for another driver's PV (whose handle may be any Cinder
   * volume's id) or by anyone who may write contents must not reach the rest of the project.
   */
  private void checkVolume(Content c) {
    Volume v = cinder.getVolume(c.volumeHandle()).orElse(null);
    if (v == null) {
      throw failed(c, "Cinder has no volume " + c.volumeHandle(), true);
    }
    if (!clusterId.equals(v.metadata().get(Names.META_CLUSTER))) {
      throw failed(
          c,
          "volume "
              + c.volumeHandle()
              + " was not made by this cluster's provisioner; only its own volumes are snapshotted",
          true);
    }
  }

  private GenericKubernetesResource mark(Content c) {
    return writes.annotate(c, SnapshotApi.BEING_CREATED, "yes");
  }

  private SnapshotSpec spec(Content c) {
    Map<String, String> metadata = identifying(c.name());
    if (c.snapshotNamespace() != null && c.snapshotName() != null) {
      metadata.put(SnapshotApi.META_SNAPSHOT, c.snapshotNamespace() + "/" + c.snapshotName());
    }
    metadata.put(
        SnapshotApi.META_POLICY,
        SnapshotApi.RETAIN.equals(c.deletionPolicy()) ? SnapshotApi.RETAIN : SnapshotApi.DELETE);
    return new SnapshotSpec(
        c.name(),
        c.volumeHandle(),
        "VolumeSnapshot " + c.snapshotNamespace() + "/" + c.snapshotName(),
        metadata);
  }

  private Map<String, String> identifying(String contentName) {
    Map<String, String> m = new LinkedHashMap<>();
    m.put(Names.META_CLUSTER, clusterId);
    m.put(SnapshotApi.META_CONTENT, contentName);
    return m;
  }

  /**
   * The content goes: under {@code Delete} its Cinder snapshot goes first (and every snapshot taken
   * for it, found by name, in case one was never recorded); under {@code Retain} the snapshot
   * stays, marked so, so that the restart sweep never takes it for a leftover.
   */
  private void delete(Content c) {
    String handle = c.handle();
    if (SnapshotApi.RETAIN.equals(c.deletionPolicy())) {
      if (handle != null) {
        cinder
            .getSnapshot(handle)
            .filter(s -> clusterId.equals(s.metadata().get(Names.META_CLUSTER)))
            .ifPresent(
                s ->
                    cinder.updateSnapshotMetadata(
                        s.id(), Map.of(SnapshotApi.META_POLICY, SnapshotApi.RETAIN)));
      }
    } else {
      List<String> doomed = new java.util.ArrayList<>();
      if (handle != null) {
        doomed.add(handle);
      }
      if (c.dynamic()) {
        cinder.findSnapshots(c.name(), identifying(c.name())).stream()
            .map(Snapshot::id)
            .filter(id -> !doomed.contains(id))
            .forEach(doomed::add);
      }
      for (String id : doomed) {
        try {
          // One already being deleted (by a run that died after asking) is waited for: Cinder
          // refuses a second DELETE until it is gone.
          Snapshot now = cinder.getSnapshot(id).orElse(null);
          if (now == null) {
            continue;
          }
          if (!"deleting".equals(now.status())) {
            cinder.deleteSnapshot(id);
          }
          cinder.awaitSnapshotDeleted(id, deletion);
        } catch (CinderException e) {
          throw new ProvisioningException(
                  "cannot delete Cinder snapshot " + id + ": " + e.getMessage(), false, e)
              .toldAs(SnapshotController.DELETE_FAILED);
        }
        LOG.info("content {}: deleted Cinder snapshot {}", c.name(), id);
      }
    }
    writes.release(c);
    metrics.succeeded(SnapshotMetrics.DELETE);
  }

  /** A failure told on the content's status too, as a CSI sidecar does. */
  private ProvisioningException failed(Content c, String message, boolean isFinal) {
    try {
      // Written once: each write is a change that brings the content back, and an error written
      // again (with a new time) at every look would loop for as long as it lasts.
      if (c.status() == null || !message.equals(c.status().error())) {
        writes.status(c, null, false, null, 0, message, clock.instant());
      }
    } catch (RuntimeException e) {
      LOG.debug("content {}: cannot write the error to its status", c.name(), e);
    }
    return new ProvisioningException(message, isFinal, null)
        .toldAs(SnapshotController.CREATION_FAILED);
  }

  /**
   * Deletes Cinder snapshots this cluster took for a content that is gone, when the content's
   * policy was {@code Delete} as last seen: a content deleted before the snapshot-controller's
   * finalizer held it, or while this provisioner was down.
   */
  void sweep() {
    for (Snapshot s : cinder.findSnapshots(null, Map.of(Names.META_CLUSTER, clusterId))) {
      String content = s.metadata().get(SnapshotApi.META_CONTENT);
      if (content == null
          || !SnapshotApi.DELETE.equals(s.metadata().get(SnapshotApi.META_POLICY))
          || "creating".equals(s.status())
          || "deleting".equals(s.status())
          || writes.get(content) != null) {
        continue;
      }
      LOG.info(
          "Cinder snapshot {} was taken for content {}, which is gone: deleting it",
          s.id(),
          content);
      cinder.deleteSnapshot(s.id());
      metrics.swept();
    }
  }
}
