package org.standalonecinder.webhook.policy;

import org.standalonecinder.api.ClaimRef;

/**
 * Where the webhook does not look at the source ({@link ClaimReview#looksAtSource()}), the clone is
 * admitted on what the request says, and the user is told where the rest is checked: by the
 * provisioner when it clones, in the claim's events. The answer is the same whatever the source's
 * namespace holds, so a review written by any pod learns nothing from it.
 */
final class UncheckedSourceRule implements ClaimRule {

  /** The rule's name in warnings and metrics. */
  static final String NAME = "clone-source-unchecked";

  @Override
  public void check(ClaimReview r, Findings f) {
    ClaimRef src = r.source();
    if (r.isUpdate() || src == null || r.looksAtSource() || !f.clean()) {
      return;
    }
    f.warn(
        NAME,
        "source claim "
            + src
            + (r.crossNamespace()
                ? ", and whether it grants the clone to " + r.namespace + ","
                : "")
            + " is checked by the provisioner when it clones, and the claim's events say why it"
            + " waits (kubectl describe pvc): this webhook does not look at claims, as it does not"
            + " authenticate the API server as the sender of its reviews (serve --client-ca)");
  }
}
