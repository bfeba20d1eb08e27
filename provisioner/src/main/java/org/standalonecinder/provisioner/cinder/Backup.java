package org.standalonecinder.provisioner.cinder;

import java.time.Instant;
import java.util.Map;

/**
 * A Cinder backup: a copy of a volume's data kept by Cinder's backup service, apart from the
 * volume's backend, so it outlives the volume and can be restored into any backend.
 *
 * @param id Cinder's UUID
 * @param name its name
 * @param volumeId the volume it was made of (which may be gone since)
 * @param status Cinder's status string ({@code creating}, {@code available}, {@code deleting},
 *     {@code restoring}, {@code error}, {@code error_deleting})
 * @param sizeGib size in GiB of the volume it was made of: the smallest volume made from it
 * @param metadata its metadata (read and written from microversion 3.43)
 * @param createdAt when Cinder made it ({@code created_at}, UTC), or null when not said
 * @param failReason why it is in error, or null
 */
public record Backup(
    String id,
    String name,
    String volumeId,
    String status,
    int sizeGib,
    Map<String, String> metadata,
    Instant createdAt,
    String failReason) {

  public Backup {
    metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
  }
}
