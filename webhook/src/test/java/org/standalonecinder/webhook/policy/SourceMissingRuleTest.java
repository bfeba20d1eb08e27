package org.standalonecinder.webhook.policy;

import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/** The source exists (clone-source-missing): one named row a case. */
class SourceMissingRuleTest extends ClaimRuleTable {

  @Override
  String rule() {
    return SourceMissingRule.NAME;
  }

  static Stream<Arguments> rows() {
    return Stream.of(
            deny(
                "a missing source is denied",
                target(clone("apps/ghost"), "clone", "2Gi", null),
                "source claim apps/ghost does not exist"),
            deny(
                "a native clone of a missing claim is denied",
                nativeClone("ghost", "clone", "2Gi"),
                "source claim apps/ghost does not exist"))
        .map(Arguments::of);
  }
}
