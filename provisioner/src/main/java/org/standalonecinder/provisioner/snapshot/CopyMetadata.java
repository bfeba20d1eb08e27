package org.standalonecinder.provisioner.snapshot;

import java.util.LinkedHashMap;
import java.util.Map;
import org.standalonecinder.provisioner.provision.Names;

/**
 * What a Cinder snapshot or backup made for a content carries in its metadata: what finds it again
 * (this cluster's id and the content's name), and what later looks at it need to know without the
 * content (its VolumeSnapshot, its deletion policy, the volume mode it was taken of).
 */
final class CopyMetadata {

  private CopyMetadata() {}

  /** What identifies the copies of the content {@code contentName} of this cluster. */
  static Map<String, String> identifying(String clusterId, String contentName) {
    Map<String, String> m = new LinkedHashMap<>();
    m.put(Names.META_CLUSTER, clusterId);
    m.put(SnapshotApi.META_CONTENT, contentName);
    return m;
  }

  /** The metadata of a new copy for {@code c}. */
  static Map<String, String> of(String clusterId, Content c) {
    Map<String, String> metadata = identifying(clusterId, c.name());
    if (c.snapshotNamespace() != null && c.snapshotName() != null) {
      metadata.put(SnapshotApi.META_SNAPSHOT, c.snapshotNamespace() + "/" + c.snapshotName());
    }
    metadata.put(
        SnapshotApi.META_POLICY,
        SnapshotApi.RETAIN.equals(c.deletionPolicy()) ? SnapshotApi.RETAIN : SnapshotApi.DELETE);
    if ("Block".equals(c.sourceVolumeMode()) || "Filesystem".equals(c.sourceVolumeMode())) {
      metadata.put(SnapshotApi.META_SOURCE_MODE, c.sourceVolumeMode());
    }
    return metadata;
  }
}
