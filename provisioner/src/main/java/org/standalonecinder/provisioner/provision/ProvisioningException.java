package org.standalonecinder.provisioner.provision;

/**
 * Provisioning or deletion failed. {@link #isFinal()} tells the controller whether repeating the
 * same request can help: a bad class parameter cannot, a Cinder outage can.
 */
public class ProvisioningException extends RuntimeException {

  private final boolean isFinal;

  public ProvisioningException(String message, boolean isFinal, Throwable cause) {
    super(message, cause);
    this.isFinal = isFinal;
  }

  /** A failure that no retry can fix: the claim or class must change. */
  public static ProvisioningException invalid(String message) {
    return new ProvisioningException(message, true, null);
  }

  public boolean isFinal() {
    return isFinal;
  }
}
