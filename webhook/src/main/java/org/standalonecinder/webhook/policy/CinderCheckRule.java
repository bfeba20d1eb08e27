package org.standalonecinder.webhook.policy;

import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.webhook.policy.ClonePolicy.CheckUnavailable;

/**
 * Last, on the validating endpoint only, and only when every other rule passed: asks Cinder
 * (through the provisioner's resolver) whether the clone can be made, so that a clone that would
 * fail is refused now with Cinder's reason instead of leaving a claim Pending.
 */
final class CinderCheckRule implements ClaimRule {

  private final CloneCheck check;

  CinderCheckRule(CloneCheck check) {
    this.check = check;
  }

  @Override
  public void check(ClaimReview r, Findings f) {
    ClaimRef src = r.source();
    if (r.mutating || r.isUpdate() || src == null || !f.clean()) {
      return;
    }
    try {
      check.refusal(src, r.claim).ifPresent(reason -> f.deny(ClonePolicy.RULE_CINDER, reason));
    } catch (CloneCheck.Unavailable e) {
      String message =
          "the clone of " + src + " could not be checked against Cinder: " + e.getMessage();
      if (r.settings.checkUnavailable() == CheckUnavailable.DENY) {
        f.deny(ClonePolicy.RULE_CHECK_UNAVAILABLE, message + "; try again");
      } else {
        f.warn(
            ClonePolicy.RULE_CHECK_UNAVAILABLE,
            message + "; admitted unchecked by the cluster's policy");
      }
    }
  }
}
