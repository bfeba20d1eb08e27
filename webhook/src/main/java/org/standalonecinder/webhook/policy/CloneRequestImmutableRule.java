package org.standalonecinder.webhook.policy;

import java.util.Objects;

/**
 * A claim's clone request is fixed at creation: the volume was (or is being) made from that source,
 * and a changed annotation would only mislead. ({@code spec.dataSource} is immutable in the API
 * server already.)
 */
final class CloneRequestImmutableRule implements ClaimRule {

  @Override
  public boolean readsRequestOnly() {
    return true;
  }

  @Override
  public void check(ClaimReview r, Findings f) {
    if (!r.isUpdate()) {
      return;
    }
    // The token has the same rule, outside audit mode and exemptions: CloneTokenGuard.
    String key = ClonePolicy.CLONE_REQUEST;
    if (!Objects.equals(r.annotation(key), r.oldAnnotation(key))) {
      f.deny(ClonePolicy.RULE_IMMUTABLE, key + " cannot change after the claim is created");
    }
  }
}
