package org.standalonecinder.provisioner.snapshot;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.controller.Pace;
import org.standalonecinder.provisioner.controller.ProvisioningException;

/**
 * The part a CSI driver's snapshotter sidecar plays, for the {@code VolumeSnapshotContent}s of this
 * provisioner's driver: takes the Cinder snapshot a dynamic content asks for (or the backup, when
 * its class says {@code type: backup}), reads the one a pre-provisioned content names, writes what
 * it found to the content's status (which the snapshot-controller copies to the {@code
 * VolumeSnapshot}), and deletes it when the content goes under the {@code Delete} policy.
 *
 * <p>A Cinder snapshot or backup is named after its content and carries the cluster's id and the
 * content's name in its metadata: taking one looks it up first, so a retry or a restart after a
 * crash never takes a second. While it is being taken, the content carries the being-created
 * annotation, so the snapshot-controller does not delete the content and lose track of it.
 */
final class ContentSync {

  private static final Logger LOG = LoggerFactory.getLogger(ContentSync.class);

  /** What the loop is told of work Cinder carries on a content: its event, when it lasts. */
  @FunctionalInterface
  interface Underway {
    /**
     * @param what what Cinder is doing
     * @param soFar for how long
     * @param late whether it lasts past its deadline ({@link SnapshotController.Timing})
     */
    void tell(GenericKubernetesResource content, String what, Duration soFar, boolean late);
  }

  private static final long GIB = 1L << 30;

  /** What {@link CinderException#getMessage} adds to a message: the call's request id. */
  private static final java.util.regex.Pattern REQUEST_ID =
      java.util.regex.Pattern.compile(" \\(request [^)]*\\)");

  private final ContentWrites writes;
  private final CinderClient cinder;
  private final Copies copies;
  private final TakeGate gate;
  private final ContentSweep sweep;
  private final ContentDeletion deletion;
  private final Function<String, SnapshotClass> classes;
  private final String driver;
  private final String clusterId;
  private final SnapshotController.Timing timing;
  private final Underway underway;
  private final Pace pace;
  private final Clock clock;
  private final SnapshotMetrics metrics;

  ContentSync(
      ContentWrites writes,
      CinderClient cinder,
      Function<String, SnapshotClass> classes,
      String driver,
      String clusterId,
      SnapshotController.Timing timing,
      Underway underway,
      Clock clock,
      SnapshotMetrics metrics) {
    this.metrics = metrics;
    this.writes = writes;
    this.cinder = cinder;
    this.copies = new Copies(cinder);
    this.gate = new TakeGate(cinder, clusterId, timing, underway, clock);
    this.sweep = new ContentSweep(copies, writes, clusterId, metrics);
    this.pace = new Pace(clock);
    this.deletion = new ContentDeletion(copies, writes, clusterId, metrics, pace, timing, underway);
    this.classes = classes;
    this.driver = driver;
    this.clusterId = clusterId;
    this.timing = timing;
    this.underway = underway;
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
      gate.dropped(c);
      return deletion.delete(raw, c, kinds(c), identifying(c.name()));
    }
    if (c.dynamic()) {
      return take(raw, c);
    }
    if (c.snapshotHandle() != null) {
      return read(raw, c);
    }
    return Optional.empty();
  }

  /** The operation its sync performs now, for the metrics. */
  String operation(Content c) {
    if (c.toDelete()) {
      return SnapshotMetrics.DELETE;
    }
    if (!c.dynamic()) {
      return SnapshotMetrics.IMPORT;
    }
    return kinds(c).equals(List.of(Copy.Kind.BACKUP))
        ? SnapshotMetrics.BACKUP
        : SnapshotMetrics.TAKE;
  }

  /** Takes the snapshot (or backup) of a dynamic content, or follows the one taken. */
  private Optional<Duration> take(GenericKubernetesResource raw, Content c) {
    if (c.status() != null && c.status().readyToUse()) {
      if (c.beingCreated()) {
        writes.annotate(c, SnapshotApi.BEING_CREATED, null);
      }
      return Optional.empty();
    }
    Copy.Kind kind = kind(c);
    if (kind == Copy.Kind.BACKUP && neverAsked(c)) {
      String full = gate.room(c);
      if (full != null) {
        return Optional.of(gate.await(raw, c, full, true));
      }
    }
    Copy s = found(c, kind == null ? List.of(Copy.Kind.values()) : List.of(kind));
    if (s == null) {
      if (c.status() != null && c.status().snapshotHandle() != null) {
        // Recorded, then gone from Cinder: someone deleted it there. Not taken again: the data
        // would be of now, not of when the user asked.
        throw failed(
            c,
            "Cinder snapshot or backup "
                + c.status().snapshotHandle()
                + " recorded for this content no longer exists",
            true);
      }
      if (kind == null) {
        throw failed(
            c, "its VolumeSnapshotClass " + c.className() + " does not exist (yet)", false);
      }
      Optional<Duration> busy = waitForVolume(raw, c, kind);
      if (busy.isPresent()) {
        return busy;
      }
      gate.passed(c);
      if (!c.beingCreated()) {
        c = Content.of(mark(c));
      }
      try {
        s = copies.create(kind, c.name(), c.volumeHandle(), description(c), metadata(c));
      } catch (CinderException e) {
        gate.dropped(c);
        throw failed(
            c,
            "cannot "
                + (kind == Copy.Kind.BACKUP ? "back up" : "snapshot")
                + " volume "
                + c.volumeHandle()
                + ": "
                + e.getMessage(),
            e instanceof CinderException.Unsupported);
      }
      LOG.info("content {}: took {} of volume {}", c.name(), s.describe(), c.volumeHandle());
    }
    return record(raw, c, s);
  }

  /**
   * What the content's class asks for; null when the class is not there (a dynamic content names
   * the class it was made through, and a content made by hand without one asks for a snapshot).
   *
   * @throws IllegalArgumentException when the class's {@code type} is neither
   */
  private Copy.Kind classKind(Content c) {
    if (c.className() == null) {
      return Copy.Kind.SNAPSHOT;
    }
    SnapshotClass cls = classes.apply(c.className());
    return cls == null ? null : Copy.Kind.of(cls.parameters());
  }

  /** {@link #classKind}, a bad class told on the content. */
  private Copy.Kind kind(Content c) {
    try {
      return classKind(c);
    } catch (IllegalArgumentException e) {
      throw failed(c, "VolumeSnapshotClass " + c.className() + ": " + e.getMessage(), true);
    }
  }

  /** Where a content's snapshot or backup may be: its class's kind, or both when unknown. */
  private List<Copy.Kind> kinds(Content c) {
    Copy.Kind k;
    try {
      k = classKind(c);
    } catch (IllegalArgumentException badClass) {
      k = null;
    }
    return k == null ? List.of(Copy.Kind.values()) : List.of(k);
  }

  /** Reads the existing snapshot or backup a pre-provisioned content names. */
  private Optional<Duration> read(GenericKubernetesResource raw, Content c) {
    if (c.status() != null && c.status().readyToUse()) {
      return Optional.empty();
    }
    Copy s = copies.get(c.snapshotHandle()).orElse(null);
    if (s == null) {
      throw failed(c, "Cinder has no snapshot or backup " + c.snapshotHandle(), false);
    }
    return record(raw, c, s);
  }

  /** Writes what Cinder says of it; when to look again while it is being made. */
  private Optional<Duration> record(GenericKubernetesResource raw, Content c, Copy s) {
    String error = s.error();
    boolean ready = s.ready();
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
    gate.taking(c, s, error != null || ready);
    if (error != null || ready) {
      // Cinder has answered for good: nothing in flight any more.
      if (after.beingCreated()) {
        writes.annotate(after, SnapshotApi.BEING_CREATED, null);
      }
      pace.done("take " + s.id());
    }
    if (error != null) {
      throw new ProvisioningException(error, true, null).toldAs(SnapshotController.CREATION_FAILED);
    }
    if (ready) {
      metrics.succeeded(
          !c.dynamic()
              ? SnapshotMetrics.IMPORT
              : s.kind() == Copy.Kind.BACKUP ? SnapshotMetrics.BACKUP : SnapshotMetrics.TAKE);
      return Optional.empty();
    }
    return Optional.of(underway(raw, s));
  }

  /**
   * Tells what Cinder is doing to make {@code s}, for how long by its record (bounded by this
   * process' own count, as for volumes); says when to look again. Only a snapshot has a deadline: a
   * backup of a large volume takes as long as its data takes to copy.
   */
  private Duration underway(GenericKubernetesResource raw, Copy s) {
    Duration locally = pace.seen("take " + s.id());
    Duration byCinder =
        s.createdAt() != null && s.createdAt().isBefore(clock.instant())
            ? Duration.between(s.createdAt(), clock.instant())
            : locally;
    Duration age = Pace.shorter(byCinder, locally);
    String what =
        "Cinder is "
            + (s.kind() == Copy.Kind.BACKUP ? "backing up" : "snapshotting")
            + " volume "
            + s.volumeId()
            + " into "
            + s.describe()
            + " (status "
            + s.status()
            + ")";
    boolean late = s.kind() == Copy.Kind.SNAPSHOT && age.compareTo(timing.stuckAfter()) >= 0;
    // Told by Cinder's count once old by both: a Cinder clock behind ours must not make every
    // new snapshot's first look worth an event.
    underway.tell(
        raw, what, age.compareTo(SnapshotController.TELL_AFTER) < 0 ? age : byCinder, late);
    return Pace.nextLook(age, timing.firstLook());
  }

  /** The snapshot or backup made for the content, when one was (by its name and metadata). */
  private Copy found(Content c, List<Copy.Kind> kinds) {
    String handle = c.status() == null ? null : c.status().snapshotHandle();
    if (handle != null) {
      return copies.get(handle, kinds).orElse(null);
    }
    List<Copy> all = copies.find(kinds, c.name(), identifying(c.name()));
    return all.isEmpty() ? null : all.get(0);
  }

  /**
   * When to look again while Cinder is busy with the content's volume, or empty when it may be
   * taken now; a backup's room is given back meanwhile.
   *
   * @throws ProvisioningException when the volume cannot be taken at all
   */
  private Optional<Duration> waitForVolume(
      GenericKubernetesResource raw, Content c, Copy.Kind kind) {
    TakeGate.State now = gate.check(c, kind);
    if (now.failure() != null || now.busy() != null) {
      gate.dropped(c);
    }
    if (now.failure() != null) {
      throw failed(c, now.failure(), now.isFinal());
    }
    return now.busy() == null
        ? Optional.empty()
        : Optional.of(gate.await(raw, c, now.busy(), false));
  }

  /**
   * Cinder was never asked for the content's snapshot or backup: it is not marked, nor recorded.
   */
  private static boolean neverAsked(Content c) {
    return !c.beingCreated() && (c.status() == null || c.status().snapshotHandle() == null);
  }

  private GenericKubernetesResource mark(Content c) {
    return writes.annotate(c, SnapshotApi.BEING_CREATED, "yes");
  }

  private static String description(Content c) {
    return "VolumeSnapshot " + c.snapshotNamespace() + "/" + c.snapshotName();
  }

  private Map<String, String> metadata(Content c) {
    return CopyMetadata.of(clusterId, c);
  }

  private Map<String, String> identifying(String contentName) {
    return CopyMetadata.identifying(clusterId, contentName);
  }

  /** A failure told on the content's status too, as a CSI sidecar does. */
  private ProvisioningException failed(Content c, String message, boolean isFinal) {
    // Cinder's request id differs at every call: kept in what is told, not in what is written.
    String written = REQUEST_ID.matcher(message).replaceAll("");
    try {
      // Written once: each write is a change that brings the content back, and an error written
      // again (with a new time, or a new request id) at every look would loop for as long as it
      // lasts.
      if (c.status() == null || !written.equals(c.status().error())) {
        writes.status(c, null, false, null, 0, written, clock.instant());
      }
    } catch (RuntimeException e) {
      LOG.debug("content {}: cannot write the error to its status", c.name(), e);
    }
    return new ProvisioningException(message, isFinal, null)
        .toldAs(SnapshotController.CREATION_FAILED);
  }

  /** The restart sweep: see {@link ContentSweep}. */
  void sweep() {
    sweep.run();
  }
}
