package org.standalonecinder.webhook.policy;

import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import java.time.Clock;
import java.time.Instant;
import java.util.Objects;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.api.CloneToken;

/**
 * An accepted cross-namespace clone carries the webhook's signed token ({@link CloneToken}), which
 * the provisioner verifies, and re-checks against the cluster, before it clones: the mutating
 * endpoint signs it with what it decided (the source's uid, the basis, the requester), the
 * validating one verifies that it is there and names this source, still the same claim, and this
 * claim. A token the user brings never reaches the rules: {@link CloneTokenGuard} removes it.
 */
final class CloneTokenRule implements ClaimRule {

  /** The rule's name in denials, warnings and metrics. */
  static final String NAME = "clone-token";

  private final CloneToken.Keys keys;
  private final Clock clock;

  /**
   * @param keys sign and verify tokens; null for none (the provisioner then refuses cross-namespace
   *     clones)
   */
  CloneTokenRule(CloneToken.Keys keys, Clock clock) {
    this.keys = keys;
    this.clock = clock;
  }

  @Override
  public void check(ClaimReview r, Findings f) {
    if (r.isUpdate()) {
      return;
    }
    if (!r.crossNamespace() && r.annotation(ClaimAnnotations.CLONE_TOKEN) != null) {
      f.deny(
          NAME,
          ClaimAnnotations.CLONE_TOKEN
              + " is set by the webhook only, for clones across namespaces; remove it");
    }
    if (keys == null || !r.crossNamespace() || !f.clean() || !r.looksAtSource()) {
      // Where the webhook does not look at the source, it decides nothing a token could carry: the
      // provisioner asks the source's consent itself.
      return;
    }
    ClaimRef src = r.source();
    ClaimRef self = new ClaimRef(r.namespace, r.claim.name());
    // The rules before this one found the source, and allowed the clone on a basis.
    String sourceUid = r.sourceClaim().map(c -> c.getMetadata().getUid()).orElse(null);
    if (r.mutating) {
      Instant now = clock.instant();
      f.annotate(
          NAME,
          r.claim,
          ClaimAnnotations.CLONE_TOKEN,
          CloneToken.sign(
              new CloneToken.Claims(
                  src,
                  sourceUid,
                  self,
                  now,
                  now.plus(CloneToken.VALIDITY),
                  r.crossNamespaceBasis().orElseThrow(),
                  principal(r.request.userInfo()),
                  r.settings.caller()),
              keys));
      return;
    }
    // The validating endpoint sees the claim as the mutating one left it: with our token.
    String created = r.claim.metadata() == null ? null : r.claim.metadata().creationTimestamp();
    try {
      CloneToken.Claims c =
          CloneToken.verify(
              r.annotation(ClaimAnnotations.CLONE_TOKEN),
              keys,
              src,
              self,
              created == null ? clock.instant() : Instant.parse(created));
      if (!Objects.equals(c.sourceUid(), sourceUid)) {
        throw new CloneToken.InvalidTokenException(
            "the source claim "
                + src
                + " was deleted and created again since the token was signed");
      }
    } catch (CloneToken.InvalidTokenException e) {
      f.deny(
          NAME,
          "cloning "
              + src
              + " across namespaces needs the webhook's token: "
              + e.getMessage()
              + " (is the mutating webhook installed?)");
    }
  }

  static CloneToken.Principal principal(UserInfo u) {
    return u == null
        ? new CloneToken.Principal(null, null, null, null)
        : new CloneToken.Principal(u.getUsername(), u.getUid(), u.getGroups(), u.getExtra());
  }
}
