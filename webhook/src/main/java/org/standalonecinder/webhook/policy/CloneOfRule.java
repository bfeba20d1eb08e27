package org.standalonecinder.webhook.policy;

import java.util.Objects;
import org.standalonecinder.api.ClaimAnnotations;

/**
 * {@code k8s.io/CloneOf} says which claim a volume was cloned from; only the provisioner, which
 * made the clone, may set or change it, or anyone could claim a volume is a copy of another.
 */
final class CloneOfRule implements ClaimRule {

  /** The rule's name in denials, warnings and metrics. */
  static final String NAME = "clone-of-provisioner-only";

  @Override
  public boolean readsRequestOnly() {
    return true;
  }

  @Override
  public void check(ClaimReview r, Findings f) {
    if (r.byProvisioner) {
      return;
    }
    String cloneOf = r.annotation(ClaimAnnotations.CLONE_OF);
    if (r.isUpdate()) {
      if (!Objects.equals(cloneOf, r.oldAnnotation(ClaimAnnotations.CLONE_OF))) {
        f.deny(
            NAME, ClaimAnnotations.CLONE_OF + " is set by the provisioner only; do not change it");
      }
    } else if (cloneOf != null) {
      f.deny(NAME, ClaimAnnotations.CLONE_OF + " is set by the provisioner only; remove it");
    }
  }
}
