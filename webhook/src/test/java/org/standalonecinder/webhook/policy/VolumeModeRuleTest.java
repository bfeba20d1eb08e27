package org.standalonecinder.webhook.policy;

import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/** The same volumeMode (clone-volume-mode): one named row a case. */
class VolumeModeRuleTest extends ClaimRuleTable {

  @Override
  String rule() {
    return VolumeModeRule.NAME;
  }

  static Stream<Arguments> rows() {
    return Stream.of(
            deny(
                "a different volumeMode is denied",
                target(clone("apps/src"), "clone", "2Gi", "Block"),
                "source claim apps/src has volumeMode Filesystem and this claim Block; they must match"),
            deny(
                    "a Filesystem clone of a Block source is denied",
                    target(clone("apps/src"), "clone", "2Gi", null),
                    "source claim apps/src has volumeMode Block and this claim Filesystem; they must match")
                .given(c -> c.claims.put("apps/src", source("apps", "src", "2Gi", "Block"))),
            allow(
                    "a Block clone of a Block source passes",
                    target(clone("apps/src"), "clone", "2Gi", "Block"),
                    null)
                .given(c -> c.claims.put("apps/src", source("apps", "src", "2Gi", "Block"))))
        .map(Arguments::of);
  }
}
