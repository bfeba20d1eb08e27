package org.standalonecinder.provisioner.mapping;

/**
 * Cinder's export cannot become a PersistentVolume: a protocol no mapper handles, connection info
 * that lacks what the protocol needs, or a feature Kubernetes' volume plugin lacks. Waiting does
 * not change Cinder's answer, so the provisioner treats it as final and the message says what to
 * change (usually the volume type) — unless {@link #awaitsConfiguration()}: then what is missing is
 * the provisioner's own configuration (a cephx Secret), which an admin can add while the claim
 * waits.
 */
public final class UnmappableExportException extends RuntimeException {

  private final boolean awaitsConfiguration;

  public UnmappableExportException(String message) {
    this(message, false);
  }

  private UnmappableExportException(String message, boolean awaitsConfiguration) {
    super(message);
    this.awaitsConfiguration = awaitsConfiguration;
  }

  /** The export is fine but the provisioner lacks configuration an admin can still add. */
  public static UnmappableExportException awaitingConfiguration(String message) {
    return new UnmappableExportException(message, true);
  }

  /** Whether a retry can succeed once an admin completes the configuration. */
  public boolean awaitsConfiguration() {
    return awaitsConfiguration;
  }
}
