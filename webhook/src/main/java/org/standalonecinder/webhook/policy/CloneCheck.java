package org.standalonecinder.webhook.policy;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import java.util.Optional;
import org.standalonecinder.api.ClaimRef;

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
  Optional<String> refusal(ClaimRef source, PersistentVolumeClaim claim);

  /** The check could not be made (down, slow, refused our token); the message says which. */
  final class Unavailable extends RuntimeException {
    public Unavailable(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
