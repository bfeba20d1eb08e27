package org.standalonecinder.webhook.policy;

import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/** The same volumeMode (clone-volume-mode): one named row a case. */
class VolumeModeRuleTest extends ClaimRuleTable {

  static Stream<Arguments> rows() {
    return Stream.of(
            deny(
                "a different volumeMode is denied",
                target(clone("apps/src"), "clone", "2Gi", "Block"),
                "source claim apps/src has volumeMode Filesystem and this claim Block; they must match"))
        .map(Arguments::of);
  }
}
