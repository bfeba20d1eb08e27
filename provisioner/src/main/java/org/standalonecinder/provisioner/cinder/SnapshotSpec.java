package org.standalonecinder.provisioner.cinder;

import java.util.Map;

/**
 * A snapshot to take.
 *
 * @param name its name (derived from the Kubernetes object it is for, so a retry finds it)
 * @param volumeId the volume to take it of, {@code available} or {@code in-use}
 * @param description shown to Cinder's users, or null
 * @param metadata what ties it to its cluster and object
 */
public record SnapshotSpec(
    String name, String volumeId, String description, Map<String, String> metadata) {

  public SnapshotSpec {
    description = CinderText.bounded(description);
    metadata = CinderText.bounded(metadata);
  }
}
