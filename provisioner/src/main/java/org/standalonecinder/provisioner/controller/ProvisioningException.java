package org.standalonecinder.provisioner.controller;

/**
 * Provisioning or deletion failed. {@link #isFinal()} tells the loop whether repeating the same
 * request can help: a bad class parameter cannot, a Cinder outage can. {@link #reason()} names the
 * event that tells it, when it is not the loop's own ({@code ProvisioningFailed}, {@code
 * VolumeFailedDelete}).
 */
public class ProvisioningException extends RuntimeException {

  private final boolean isFinal;
  private final String reason;

  public ProvisioningException(String message, boolean isFinal, Throwable cause) {
    this(message, isFinal, cause, null);
  }

  private ProvisioningException(String message, boolean isFinal, Throwable cause, String reason) {
    super(message, cause);
    this.isFinal = isFinal;
    this.reason = reason;
  }

  /** A failure that no retry can fix: the claim or class must change. */
  public static ProvisioningException invalid(String message) {
    return new ProvisioningException(message, true, null);
  }

  /** The same failure, told with the event reason {@code reason} (e.g. VolumeResizeFailed). */
  public ProvisioningException toldAs(String reason) {
    return new ProvisioningException(getMessage(), isFinal, this, reason);
  }

  public boolean isFinal() {
    return isFinal;
  }

  /** The event reason, or null for the loop's default. */
  public String reason() {
    return reason;
  }
}
