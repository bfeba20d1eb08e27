package org.standalonecinder.webhook.policy;

import java.util.Objects;
import org.standalonecinder.api.ClaimAnnotations;

/**
 * A claim's clone request is fixed at creation: the volume was (or is being) made from that source,
 * and a changed annotation would only mislead. ({@code spec.dataSource} is immutable in the API
 * server already.)
 */
final class CloneRequestImmutableRule implements ClaimRule {

  /** The rule's name in denials, warnings and metrics. */
  static final String NAME = "clone-request-immutable";

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
    String key = ClaimAnnotations.CLONE_REQUEST;
    if (!Objects.equals(r.annotation(key), r.oldAnnotation(key))) {
      f.deny(NAME, key + " cannot change after the claim is created");
    }
  }
}
