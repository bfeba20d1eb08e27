package org.standalonecinder.webhook.policy;

import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/** A source not being deleted (clone-source-deleting): one named row a case. */
class SourceDeletingRuleTest extends ClaimRuleTable {

  @Override
  String rule() {
    return SourceDeletingRule.NAME;
  }

  static Stream<Arguments> rows() {
    return Stream.of(
            deny(
                    "a deleting source is denied",
                    target(clone("apps/src"), "clone", "2Gi", null),
                    "source claim apps/src is being deleted")
                .given(
                    c ->
                        c.claims
                            .get("apps/src")
                            .getMetadata()
                            .setDeletionTimestamp("2026-11-22T00:00:00Z")),
            deny(
                    "a deleting source in another namespace is not revealed to an outsider",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    "cloning team-b/shared into namespace apps is not allowed: you may not create"
                        + " pods in team-b and the source grants no clone to apps (annotation"
                        + " standalone-cinder.io/clone-grant, or a ReferenceGrant in team-b)")
                .given(
                    c ->
                        c.claims
                            .get("team-b/shared")
                            .getMetadata()
                            .setDeletionTimestamp("2026-11-22T00:00:00Z"))
                .fired(CrossNamespaceRule.NAME))
        .map(Arguments::of);
  }
}
