package org.standalonecinder.webhook.policy;

import java.util.Optional;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.webhook.admission.Claim;

/**
 * Asks whether Cinder can make the clone a claim asks for (the provisioner's resolver: source claim
 * → PV → Cinder volume, its status, size, zone and type), so that a clone that would fail is
 * refused at admission with the reason instead of leaving a claim Pending. Read-only.
 */
public interface CloneCheck {

  /** No check (no resolver configured): the provisioner finds out at provisioning. */
  CloneCheck NONE = (source, claim) -> Optional.empty();

  /**
   * @return empty when the clone can be made, or why it cannot (a sentence for the user)
   * @throws Unavailable when the check could not be made in time
   */
  Optional<String> refusal(ClaimRef source, Claim claim);

  /** The check could not be made (down, slow, refused our token); the message says which. */
  final class Unavailable extends RuntimeException {
    public Unavailable(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
