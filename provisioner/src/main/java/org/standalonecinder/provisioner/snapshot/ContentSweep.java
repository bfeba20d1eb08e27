package org.standalonecinder.provisioner.snapshot;

import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.provision.Names;

/** What the snapshot loop's housekeeping deletes in Cinder: what contents that are gone left. */
final class ContentSweep {

  private static final Logger LOG = LoggerFactory.getLogger(ContentSweep.class);

  private final Copies copies;
  private final ContentWrites writes;
  private final String clusterId;
  private final SnapshotMetrics metrics;

  ContentSweep(Copies copies, ContentWrites writes, String clusterId, SnapshotMetrics metrics) {
    this.copies = copies;
    this.writes = writes;
    this.clusterId = clusterId;
    this.metrics = metrics;
  }

  /**
   * Deletes Cinder snapshots and backups this cluster made for a content that is gone, when the
   * content's policy was {@code Delete} as last seen: a content deleted before the
   * snapshot-controller's finalizer held it, or while this provisioner was down.
   */
  void run() {
    List<Copy> made = new java.util.ArrayList<>(sweepable(Copy.Kind.SNAPSHOT));
    made.addAll(sweepable(Copy.Kind.BACKUP));
    for (Copy s : made) {
      String content = s.metadata().get(SnapshotApi.META_CONTENT);
      if (content == null
          || !SnapshotApi.DELETE.equals(s.metadata().get(SnapshotApi.META_POLICY))
          || "creating".equals(s.status())
          || "deleting".equals(s.status())
          || writes.get(content) != null) {
        continue;
      }
      LOG.info("{} was made for content {}, which is gone: deleting it", s.describe(), content);
      copies.delete(s);
      metrics.swept();
    }
  }

  /**
   * This cluster's snapshots or backups. A cloud that keeps backups from this user (403) or has no
   * backup API (404) has none of this cluster's: the snapshots are swept all the same.
   */
  private List<Copy> sweepable(Copy.Kind kind) {
    try {
      return copies.find(List.of(kind), null, Map.of(Names.META_CLUSTER, clusterId));
    } catch (CinderException.Forbidden | CinderException.NotFound e) {
      if (kind == Copy.Kind.SNAPSHOT) {
        throw e;
      }
      LOG.debug("no backups to sweep: {}", e.getMessage());
      return List.of();
    }
  }
}
