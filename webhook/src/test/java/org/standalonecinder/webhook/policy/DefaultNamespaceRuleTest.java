package org.standalonecinder.webhook.policy;

import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/**
 * The namespace default of a same-namespace CloneRequest (clone-request-namespace): one named row a
 * case.
 */
class DefaultNamespaceRuleTest extends ClaimRuleTable {

  @Override
  String rule() {
    return DefaultNamespaceRule.NAME;
  }

  static Stream<Arguments> rows() {
    return Stream.of(
            allow(
                "same-namespace clone by name is defaulted to namespace/name",
                target(clone("src"), "clone", "2Gi", null),
                DEFAULTED),
            allow(
                "same-namespace clone with namespace needs no patch",
                target(clone("apps/src"), "clone", "2Gi", null),
                null))
        .map(Arguments::of);
  }
}
