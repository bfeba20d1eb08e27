package org.standalonecinder.provisioner.cinder;

import java.util.Map;

/**
 * A backup to make.
 *
 * @param name its name (derived from the Kubernetes object it is for, so a retry finds it)
 * @param volumeId the volume to back up, {@code available} or {@code in-use} (crash-consistent)
 * @param description shown to Cinder's users, or null
 * @param metadata what ties it to its cluster and object
 */
public record BackupSpec(
    String name, String volumeId, String description, Map<String, String> metadata) {

  public BackupSpec {
    description = CinderText.bounded(description);
    metadata = CinderText.bounded(metadata);
  }
}
