package org.standalonecinder.provisioner.snapshot;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.controller.Pace;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.provision.Names;

/**
 * A content going: under {@code Delete} its Cinder snapshot or backup goes first (and every one
 * made for it, found by name, in case one was never recorded); under {@code Retain} it stays,
 * marked so, so that the restart sweep never takes it for a leftover.
 *
 * <p>No worker waits for Cinder to delete (a large backup takes minutes): each look asks Cinder to
 * delete what is still there and not being deleted, and says when to look again; the content's
 * finalizer goes only once Cinder has nothing of it left. What survives a restart is Cinder's own
 * record (a snapshot or backup {@code deleting}) and the content's finalizer.
 */
final class ContentDeletion {

  private static final Logger LOG = LoggerFactory.getLogger(ContentDeletion.class);

  private final Copies copies;
  private final ContentWrites writes;
  private final String clusterId;
  private final SnapshotMetrics metrics;
  private final Pace pace;
  private final SnapshotController.Timing timing;
  private final ContentSync.Underway underway;

  ContentDeletion(
      Copies copies,
      ContentWrites writes,
      String clusterId,
      SnapshotMetrics metrics,
      Pace pace,
      SnapshotController.Timing timing,
      ContentSync.Underway underway) {
    this.copies = copies;
    this.writes = writes;
    this.clusterId = clusterId;
    this.metrics = metrics;
    this.pace = pace;
    this.timing = timing;
    this.underway = underway;
  }

  /**
   * One look at a content to delete.
   *
   * @param kinds where the content's snapshot or backup may be
   * @param identifying the metadata its snapshots and backups carry
   * @return when to look again, while Cinder is deleting; empty once the content is released
   */
  Optional<Duration> delete(
      GenericKubernetesResource raw,
      Content c,
      List<Copy.Kind> kinds,
      Map<String, String> identifying) {
    String handle = c.handle();
    if (SnapshotApi.RETAIN.equals(c.deletionPolicy())) {
      if (handle != null) {
        copies
            .get(handle)
            .filter(s -> clusterId.equals(s.metadata().get(Names.META_CLUSTER)))
            .ifPresent(
                s -> copies.setMetadata(s, Map.of(SnapshotApi.META_POLICY, SnapshotApi.RETAIN)));
      }
    } else {
      Map<String, Copy> doomed = new LinkedHashMap<>();
      if (handle != null) {
        copies.get(handle).map(s -> notForeign(c, s)).ifPresent(s -> doomed.put(s.id(), s));
      }
      if (c.dynamic()) {
        copies.find(kinds, c.name(), identifying).forEach(s -> doomed.putIfAbsent(s.id(), s));
      }
      List<Copy> going = new ArrayList<>();
      for (Copy s : doomed.values()) {
        if (deleteOne(c, s)) {
          going.add(s);
        }
      }
      if (!going.isEmpty()) {
        Duration soFar = pace.seen("delete " + c.name());
        String what =
            "Cinder is deleting "
                + going.stream().map(Copy::describe).collect(Collectors.joining(", "));
        underway.tell(raw, what, soFar, soFar.compareTo(timing.stuckAfter()) >= 0);
        return Optional.of(Pace.nextLook(soFar, timing.firstLook()));
      }
      pace.done("delete " + c.name());
    }
    writes.release(c);
    metrics.succeeded(SnapshotMetrics.DELETE);
    return Optional.empty();
  }

  /**
   * A copy another cluster made is that cluster's to delete: a content naming it (one an admin
   * made, with {@code deletionPolicy: Delete}) must not take it from under that cluster's
   * VolumeSnapshot. A copy that names no cluster (made outside Kubernetes) is the admin's to give.
   */
  private Copy notForeign(Content c, Copy s) {
    String owner = s.metadata().get(Names.META_CLUSTER);
    if (owner == null || owner.equals(clusterId)) {
      return s;
    }
    throw new ProvisioningException(
            "content "
                + c.name()
                + " names "
                + s.describe()
                + ", which cluster "
                + ClaimRef.quote(owner)
                + " made (this one is "
                + clusterId
                + "): it is deleted only there; to let this content go without deleting it, set"
                + " its deletionPolicy to Retain",
            true,
            null)
        .toldAs(SnapshotController.DELETE_FAILED);
  }

  /**
   * Asks Cinder to delete one, unless it is gone or being deleted already (Cinder refuses a second
   * DELETE until the first is done).
   *
   * @return whether it is still there
   */
  private boolean deleteOne(Content c, Copy s) {
    try {
      Copy now = copies.get(s.kind(), s.id()).orElse(null);
      if (now == null) {
        pace.done("asked " + s.id());
        LOG.info("content {}: {} is gone", c.name(), s.describe());
        return false;
      }
      if (now.status().equals("deleting")) {
        pace.seen("asked " + s.id());
        return true;
      }
      if (now.status().equals("error_deleting") || pace.knows("asked " + s.id())) {
        // asked before (by this process or another), and neither deleting nor gone
        pace.done("asked " + s.id());
        throw notDeleted(now);
      }
      copies.delete(now);
      pace.seen("asked " + s.id());
      LOG.info("content {}: deleting {}", c.name(), s.describe());
      return true;
    } catch (CinderException.NotFound gone) {
      return false;
    } catch (CinderException e) {
      throw new ProvisioningException(
              "cannot delete " + s.describe() + ": " + e.getMessage(), false, e)
          .toldAs(SnapshotController.DELETE_FAILED);
    }
  }

  /**
   * Cinder did not delete it: back to {@code available} (its backend keeps it: on RBD, a volume
   * restored from a snapshot still depends on it), or {@code error_deleting} (which only an admin
   * undoes). A failure, so that the loop backs off before asking again.
   */
  private static ProvisioningException notDeleted(Copy now) {
    String reset =
        now.kind() == Copy.Kind.SNAPSHOT
            ? "cinder snapshot-reset-state"
            : "cinder backup-reset-state";
    String why =
        now.status().equals("error_deleting")
            ? "; an admin resets it once the cause is found: "
                + reset
                + " --state available "
                + now.id()
            : " (its backend keeps it: on RBD, a volume restored from a snapshot may still depend"
                + " on it)";
    return new ProvisioningException(
            "Cinder did not delete "
                + now.describe()
                + ": it is "
                + now.status()
                + " after its deletion was asked"
                + why
                + "; see the log of cinder-volume (a snapshot) or cinder-backup (a backup); asked"
                + " again later",
            false,
            null)
        .toldAs(SnapshotController.DELETE_FAILED);
  }
}
