package org.standalonecinder.provisioner.provision;

import org.standalonecinder.provisioner.controller.ProvisionResult;

/**
 * Cinder is still making the claim's volume (a copy may take hours) or exporting it: nothing waits
 * for it. The volume is the claim's meanwhile, found again by its name; the claim is looked at
 * again after its {@link ProvisionResult.Progress#after}, or at once when work of this process ends
 * ({@link ProvisionResult.Progress#wake}).
 */
public final class StillMaking extends RuntimeException {
  private final String volumeId;
  private final ProvisionResult.Progress progress;

  StillMaking(String volumeId, String what, ProvisionResult.Progress progress) {
    super(what, null, false, false);
    this.volumeId = volumeId;
    this.progress = progress;
  }

  /** The volume Cinder is making, or null while the claim waits for room for its copy. */
  public String volumeId() {
    return volumeId;
  }

  /** How long Cinder has been at it, and when to look again. */
  public ProvisionResult.Progress progress() {
    return progress;
  }
}
