package org.standalonecinder.webhook.policy;

import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.api.CloneToken;

/** The cross-namespace clone token (clone-token): one named row a case. */
class CloneTokenRuleTest extends ClaimRuleTable {

  static Stream<Arguments> rows() {
    return Stream.of(
            deny(
                "a token on a same-namespace clone is denied",
                target(
                    Map.of(ClonePolicy.CLONE_REQUEST, "apps/src", CloneToken.ANNOTATION, "x.y"),
                    "clone",
                    "2Gi",
                    null),
                "standalone-cinder.io/clone-token is set by the webhook only, for clones across namespaces; remove it"),
            allow(
                    "a token the user brings is replaced by the webhook's",
                    target(
                        Map.of(
                            ClonePolicy.CLONE_REQUEST,
                            "team-b/shared",
                            CloneToken.ANNOTATION,
                            "forged.token"),
                        "clone",
                        "1Gi",
                        null),
                    stamped("team-b/shared"))
                .by("bob"),
            deny(
                    "without the mutating webhook a cross-namespace clone has no token",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    "cloning team-b/shared across namespaces needs the webhook's token: the claim carries no standalone-cinder.io/clone-token (is the mutating webhook installed?)")
                .by("bob")
                .withoutMutatingWebhook(),
            deny(
                    "a forged token is denied",
                    target(
                        Map.of(
                            ClonePolicy.CLONE_REQUEST,
                            "team-b/shared",
                            CloneToken.ANNOTATION,
                            CloneToken.sign(
                                new CloneToken.Claims(
                                    new ClaimRef("team-b", "shared"),
                                    new ClaimRef("apps", "copy"),
                                    NOW,
                                    NOW.plusSeconds(300)),
                                "not the key of this webhook, 32b"
                                    .getBytes(java.nio.charset.StandardCharsets.UTF_8))),
                        "clone",
                        "1Gi",
                        null),
                    "standalone-cinder.io/clone-token was not signed by the webhook")
                .by("bob")
                .withoutMutatingWebhook(),
            deny(
                    "an expired token is denied",
                    created(
                        target(
                            Map.of(
                                ClonePolicy.CLONE_REQUEST,
                                "team-b/shared",
                                CloneToken.ANNOTATION,
                                token("team-b/shared", "apps/copy")),
                            "clone",
                            "1Gi",
                            null),
                        NOW.plusSeconds(3600)),
                    "standalone-cinder.io/clone-token expired")
                .by("bob")
                .withoutMutatingWebhook())
        .map(Arguments::of);
  }
}
