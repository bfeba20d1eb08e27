package org.standalonecinder.webhook.policy;

import org.standalonecinder.api.ClaimRef;

/**
 * Last, on the validating endpoint only, and only when every other rule passed: asks Cinder
 * (through the provisioner's resolver) whether the clone can be made, so that a clone that would
 * fail is refused now with Cinder's reason instead of leaving a claim Pending.
 */
final class CinderCheckRule implements ClaimRule {

  /** The rule's name in denials, warnings and metrics. */
  static final String NAME = "clone-cinder";

  /** The name it reports under when the check cannot be made. */
  static final String UNAVAILABLE_NAME = "clone-check-unavailable";

  /** What to do when the clone cannot be checked against Cinder (the resolver is down). */
  public enum CheckUnavailable {
    /** Deny: the webhook fails closed. */
    DENY,
    /** Allow with a warning: the provisioner still checks when it clones. */
    ALLOW
  }

  private final CloneCheck check;

  CinderCheckRule(CloneCheck check) {
    this.check = check;
  }

  @Override
  public void check(ClaimReview r, Findings f) {
    ClaimRef src = r.source();
    // The resolver looks the source up: where the webhook does not, neither does it.
    if (r.mutating || r.isUpdate() || src == null || !f.clean() || !r.looksAtSource()) {
      return;
    }
    try {
      check.refusal(src, r.claim).ifPresent(reason -> f.deny(NAME, reason));
    } catch (CloneCheck.Unavailable e) {
      String message =
          "the clone of " + src + " could not be checked against Cinder: " + e.getMessage();
      if (r.settings.checkUnavailable() == CheckUnavailable.DENY) {
        f.deny(UNAVAILABLE_NAME, message + "; try again");
      } else {
        f.warn(UNAVAILABLE_NAME, message + "; admitted unchecked by the cluster's policy");
      }
    }
  }
}
