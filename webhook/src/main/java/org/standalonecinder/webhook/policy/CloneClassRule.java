package org.standalonecinder.webhook.policy;

import org.standalonecinder.api.ClassParameters;
import org.standalonecinder.api.InvalidClassParametersException;

/**
 * A clone needs a class of ours that allows cloning: the provisioner would otherwise refuse it, and
 * the claim would stay Pending instead of being refused now with the reason.
 */
final class CloneClassRule implements ClaimRule {

  /** The rule's name in denials, warnings and metrics. */
  static final String NAME = "clone-class";

  @Override
  public void check(ClaimReview r, Findings f) {
    if (r.isUpdate() || r.source() == null) {
      return;
    }
    if (r.storageClass().isEmpty()) {
      f.deny(
          NAME,
          "a clone needs a StorageClass of "
              + r.settings.provisionerName()
              + " with smartclone \"true\"; StorageClass "
              + r.className()
              + " does not exist");
      return;
    }
    boolean smartclone;
    try {
      smartclone = ClassParameters.parse(r.storageClass().get().getParameters()).smartclone();
    } catch (InvalidClassParametersException e) {
      smartclone = false;
    }
    if (!smartclone) {
      f.deny(
          NAME,
          "StorageClass "
              + r.className()
              + " does not allow cloning: its smartclone parameter is not \"true\"");
    }
  }
}
