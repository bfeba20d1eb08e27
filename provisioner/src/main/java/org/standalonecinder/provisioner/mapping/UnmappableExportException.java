package org.standalonecinder.provisioner.mapping;

/**
 * Cinder's export cannot become a PersistentVolume: a protocol no mapper handles, connection info
 * that lacks what the protocol needs, or a feature Kubernetes' volume plugin lacks. Waiting does
 * not change Cinder's answer, so the provisioner treats it as final; the message says what to
 * change (usually the volume type).
 */
public final class UnmappableExportException extends RuntimeException {

  public UnmappableExportException(String message) {
    super(message);
  }
}
