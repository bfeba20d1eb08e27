package org.standalonecinder.provisioner.provision;

import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.controller.ProvisioningException;

/** Whether a failure of provisioning is final. */
final class Failures {

  private Failures() {}

  /**
   * The failure as the claim loop needs it, saying whether a retry can help: a timeout, an outage,
   * a busy or failed volume may pass; a refusal of our parameters will not.
   */
  static ProvisioningException of(RuntimeException e) {
    if (e instanceof ProvisioningException p) {
      return p;
    }
    if (e instanceof org.standalonecinder.provisioner.mapping.UnmappableExportException u) {
      return new ProvisioningException(u.getMessage(), !u.awaitsConfiguration(), u);
    }
    if (e instanceof CinderException c) {
      // A timeout or outage may still succeed; a refusal of our parameters will not, except
      // while the volume is busy (snapshots, attached) which the user may change.
      boolean busy = c instanceof CinderException.BadRequest;
      // A volume that went to error has been rolled back (deleted); a new one may well succeed
      // once the scheduler finds room or the backend is back, so the claim is tried again with
      // backoff, as Kubernetes' external provisioners do.
      boolean failedVolume =
          c instanceof CinderException.UnexpectedState u
              && u.status() != null
              && u.status().startsWith("error");
      return new ProvisioningException(c.getMessage(), !c.retryable() && !busy && !failedVolume, c);
    }
    return new ProvisioningException(e.toString(), false, e);
  }
}
