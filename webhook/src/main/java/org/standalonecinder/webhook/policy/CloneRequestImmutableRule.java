package org.standalonecinder.webhook.policy;

import java.util.Objects;
import org.standalonecinder.api.CloneToken;

/**
 * A claim's clone request and its token are fixed at creation: the volume was (or is being) made
 * from that source, and a changed annotation would only mislead. ({@code spec.dataSource} is
 * immutable in the API server already.)
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
    for (String key : new String[] {ClonePolicy.CLONE_REQUEST, CloneToken.ANNOTATION}) {
      if (!Objects.equals(r.annotation(key), r.oldAnnotation(key))) {
        f.deny(ClonePolicy.RULE_IMMUTABLE, key + " cannot change after the claim is created");
      }
    }
  }
}
