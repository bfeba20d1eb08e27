package org.standalonecinder.webhook.policy;

import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.api.CloneToken;
import org.standalonecinder.api.CloneToken.Basis;

/** The cross-namespace clone token (clone-token): one named row a case. */
class CloneTokenRuleTest extends ClaimRuleTable {

  @Override
  String rule() {
    return CloneTokenRule.NAME;
  }

  static Stream<Arguments> rows() {
    return Stream.of(
            deny(
                "a token on a same-namespace clone is denied",
                target(
                    Map.of(
                        ClonePolicy.CLONE_REQUEST, "apps/src", ClaimAnnotations.CLONE_TOKEN, "x.y"),
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
                            ClaimAnnotations.CLONE_TOKEN,
                            "forged.token"),
                        "clone",
                        "1Gi",
                        null),
                    stamped("team-b/shared", Basis.REQUESTER, "bob"))
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
                            ClaimAnnotations.CLONE_TOKEN,
                            CloneToken.sign(
                                new CloneToken.Claims(
                                    new ClaimRef("team-b", "shared"),
                                    "uid-team-b-shared",
                                    new ClaimRef("apps", "copy"),
                                    NOW,
                                    NOW.plusSeconds(300),
                                    Basis.POLICY,
                                    new CloneToken.Principal("bob", null, null, null)),
                                CloneToken.Keys.of(
                                    "not the key of this webhook, 32b"
                                        .getBytes(java.nio.charset.StandardCharsets.UTF_8),
                                    null))),
                        "clone",
                        "1Gi",
                        null),
                    "cloning team-b/shared across namespaces needs the webhook's token: standalone-cinder.io/clone-token was not signed by the webhook (is the mutating webhook installed?)")
                .by("bob")
                .withoutMutatingWebhook(),
            deny(
                    "an expired token is denied",
                    created(
                        target(
                            Map.of(
                                ClonePolicy.CLONE_REQUEST,
                                "team-b/shared",
                                ClaimAnnotations.CLONE_TOKEN,
                                token("team-b/shared", "apps/copy", Basis.REQUESTER, "bob")),
                            "clone",
                            "1Gi",
                            null),
                        NOW.plusSeconds(3600)),
                    "cloning team-b/shared across namespaces needs the webhook's token: standalone-cinder.io/clone-token expired: it was valid until 2026-11-22T10:05:00Z, the claim was created 2026-11-22T11:00:00Z (is the mutating webhook installed?)")
                .by("bob")
                .withoutMutatingWebhook(),
            allow(
                    "a token signed for the source's present uid verifies",
                    target(
                        Map.of(
                            ClonePolicy.CLONE_REQUEST,
                            "team-b/shared",
                            ClaimAnnotations.CLONE_TOKEN,
                            token("team-b/shared", "apps/copy", Basis.GRANT, "bob")),
                        "clone",
                        "1Gi",
                        null),
                    null)
                .by("bob")
                .withoutMutatingWebhook(),
            deny(
                    "a source deleted and created again under its name is another claim",
                    target(
                        Map.of(
                            ClonePolicy.CLONE_REQUEST,
                            "team-b/shared",
                            ClaimAnnotations.CLONE_TOKEN,
                            token("team-b/shared", "apps/copy", Basis.GRANT, "bob")),
                        "clone",
                        "1Gi",
                        null),
                    "cloning team-b/shared across namespaces needs the webhook's token: the source"
                        + " claim team-b/shared was deleted and created again since the token was"
                        + " signed (is the mutating webhook installed?)")
                .by("bob")
                .given(c -> c.claims.get("team-b/shared").getMetadata().setUid("uid-new"))
                .withoutMutatingWebhook())
        .map(Arguments::of);
  }
}
