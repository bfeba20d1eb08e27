package org.standalonecinder.webhook.policy;

import java.time.Clock;
import java.time.Instant;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.api.CloneToken;

/**
 * An accepted cross-namespace clone carries the webhook's signed token ({@link CloneToken}), which
 * the provisioner verifies before it clones: the mutating endpoint signs it, the validating one
 * verifies that it is there and names this source and this claim. A user may not bring one.
 */
final class CloneTokenRule implements ClaimRule {

  private final byte[] key;
  private final Clock clock;

  /**
   * @param key signs and verifies tokens; null for none (the provisioner then refuses
   *     cross-namespace clones)
   */
  CloneTokenRule(byte[] key, Clock clock) {
    this.key = key == null ? null : key.clone();
    this.clock = clock;
  }

  @Override
  public void check(ClaimReview r, Findings f) {
    if (r.isUpdate()) {
      return;
    }
    if (!r.crossNamespace() && r.annotation(CloneToken.ANNOTATION) != null) {
      f.deny(
          ClonePolicy.RULE_TOKEN,
          CloneToken.ANNOTATION
              + " is set by the webhook only, for clones across namespaces; remove it");
    }
    if (key == null || !r.crossNamespace() || !f.clean()) {
      return;
    }
    ClaimRef src = r.source();
    ClaimRef self = new ClaimRef(r.namespace, r.claim.getMetadata().getName());
    if (r.mutating) {
      Instant now = clock.instant();
      f.annotate(
          ClonePolicy.RULE_TOKEN,
          r.claim,
          CloneToken.ANNOTATION,
          CloneToken.sign(
              new CloneToken.Claims(src, self, now, now.plus(CloneToken.VALIDITY)), key));
      return;
    }
    // The validating endpoint sees the claim as the mutating one left it: with our token.
    String created = r.claim.getMetadata().getCreationTimestamp();
    try {
      CloneToken.verify(
          r.annotation(CloneToken.ANNOTATION),
          key,
          src,
          self,
          created == null ? clock.instant() : Instant.parse(created));
    } catch (CloneToken.InvalidTokenException e) {
      f.deny(
          ClonePolicy.RULE_TOKEN,
          "cloning "
              + src
              + " across namespaces needs the webhook's token: "
              + e.getMessage()
              + " (is the mutating webhook installed?)");
    }
  }
}
