package org.standalonecinder.webhook.policy;

import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/** Clone annotations fixed at creation (clone-request-immutable): one named row a case. */
class CloneRequestImmutableRuleTest extends ClaimRuleTable {

  @Override
  String rule() {
    return CloneRequestImmutableRule.NAME;
  }

  static Stream<Arguments> rows() {
    return Stream.of(
            deny(
                    "CloneRequest changed on update is denied",
                    target(clone("apps/other"), "clone", "2Gi", null),
                    "k8s.io/CloneRequest cannot change after the claim is created")
                .updating(target(clone("apps/src"), "clone", "2Gi", null)),
            deny(
                    "CloneRequest added on update is denied",
                    target(clone("apps/src"), "clone", "2Gi", null),
                    "k8s.io/CloneRequest cannot change after the claim is created")
                .updating(target(Map.of(), "clone", "2Gi", null)),
            deny(
                    "CloneRequest removed on update is denied",
                    target(Map.of(), "clone", "2Gi", null),
                    "k8s.io/CloneRequest cannot change after the claim is created")
                .updating(target(clone("apps/src"), "clone", "2Gi", null)),
            allow(
                    "other updates of a clone pass, even after its source is gone",
                    target(clone("apps/src"), "clone", "2Gi", null),
                    null)
                .updating(target(clone("apps/src"), "clone", "2Gi", null))
                .given(c -> c.claims.remove("apps/src")))
        .map(Arguments::of);
  }
}
