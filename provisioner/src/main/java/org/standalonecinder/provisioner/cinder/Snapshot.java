package org.standalonecinder.provisioner.cinder;

import java.time.Instant;
import java.util.Map;

/**
 * A Cinder snapshot.
 *
 * @param id Cinder's UUID
 * @param name its name
 * @param volumeId the volume it was taken of
 * @param status Cinder's status string ({@code creating}, {@code available}, {@code deleting},
 *     {@code error}, {@code error_deleting})
 * @param sizeGib size in GiB: the smallest volume made from it
 * @param metadata its metadata
 * @param createdAt when Cinder took it (its {@code created_at}, UTC), or null when not said
 */
public record Snapshot(
    String id,
    String name,
    String volumeId,
    String status,
    int sizeGib,
    Map<String, String> metadata,
    Instant createdAt) {

  public Snapshot {
    metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
  }
}
