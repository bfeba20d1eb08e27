package org.standalonecinder.webhook.policy;

import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/** A Bound source (clone-source-unbound): one named row a case. */
class SourceUnboundRuleTest extends ClaimRuleTable {

  @Override
  String rule() {
    return SourceUnboundRule.NAME;
  }

  static Stream<Arguments> rows() {
    return Stream.of(
            deny(
                    "an unbound source is denied",
                    target(clone("apps/src"), "clone", "2Gi", null),
                    "source claim apps/src is not Bound yet")
                .given(c -> c.claims.get("apps/src").getStatus().setPhase("Pending")),
            deny(
                    "a native clone of an unbound claim is denied",
                    nativeClone("src", "clone", "2Gi"),
                    "source claim apps/src is not Bound yet")
                .given(c -> c.claims.get("apps/src").getStatus().setPhase("Pending")))
        .map(Arguments::of);
  }
}
