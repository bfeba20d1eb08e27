package org.standalonecinder.provisioner.snapshot;

import java.time.Instant;
import java.util.Map;

/**
 * What a content stands for in Cinder: a snapshot, kept on its volume's backend, or a backup, kept
 * by Cinder's backup service apart from it (it outlives the volume and its backend).
 *
 * @param kind which of the two
 * @param id Cinder's id: the content's snapshot handle either way, as cinder-csi has it
 * @param volumeId the volume it was made of (which may be gone since)
 * @param status Cinder's status string
 * @param sizeGib the smallest volume it fills
 * @param createdAt when Cinder made it, or null
 * @param metadata its metadata
 * @param failReason why a backup is in error (Cinder says it for backups only), or null
 */
record Copy(
    Copy.Kind kind,
    String id,
    String volumeId,
    String status,
    int sizeGib,
    Instant createdAt,
    Map<String, String> metadata,
    String failReason) {

  /** A snapshot or a backup, and the {@code VolumeSnapshotClass} parameter that asks for it. */
  enum Kind {
    SNAPSHOT("snapshot"),
    BACKUP("backup");

    /** The class parameter that chooses the kind, as cinder-csi names it. */
    static final String PARAMETER = "type";

    final String noun;

    Kind(String noun) {
      this.noun = noun;
    }

    /**
     * The kind a class's parameters ask for: a snapshot unless {@code type: backup}.
     *
     * @throws IllegalArgumentException for another value, with the message to tell the user
     */
    static Kind of(Map<String, String> parameters) {
      String asked = parameters.get(PARAMETER);
      if (asked == null || asked.equals(SNAPSHOT.noun)) {
        return SNAPSHOT;
      }
      if (asked.equals(BACKUP.noun)) {
        return BACKUP;
      }
      throw new IllegalArgumentException(
          "parameter "
              + PARAMETER
              + " is \""
              + asked
              + "\"; it must be \"snapshot\" (the default) or \"backup\"");
    }
  }

  Copy {
    metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
  }

  boolean ready() {
    return "available".equals(status);
  }

  /** What is wrong with it, when Cinder put it in an error status; else null. */
  String error() {
    if (!status.startsWith("error")) {
      return null;
    }
    return describe()
        + " is in status "
        + status
        + (failReason == null || failReason.isBlank() ? "" : ": " + failReason);
  }

  /** {@code Cinder snapshot <id>}, {@code Cinder backup <id>}. */
  String describe() {
    return "Cinder " + kind.noun + " " + id;
  }
}
