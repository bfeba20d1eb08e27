package org.standalonecinder.webhook.policy;

import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;
import org.standalonecinder.webhook.policy.CinderCheckRule.CheckUnavailable;

/** The Cinder check, last (clone-cinder, clone-check-unavailable): one named row a case. */
class CinderCheckRuleTest extends ClaimRuleTable {

  @Override
  String rule() {
    return CinderCheckRule.NAME;
  }

  static Stream<Arguments> rows() {
    return Stream.of(
            deny(
                    "Cinder cannot clone it: the resolver's reason is the answer",
                    target(clone("apps/src"), "clone", "2Gi", null),
                    "the Cinder volume vol-src of source claim apps/src is error")
                .cinder(
                    (src, c) ->
                        Optional.of(
                            "the Cinder volume vol-src of source claim " + src + " is error")),
            deny(
                    "Cinder is asked last: a rule that denies first needs no resolver",
                    target(clone("apps/ghost"), "clone", "2Gi", null),
                    "source claim apps/ghost does not exist")
                .cinder(
                    (src, c) -> {
                      throw new AssertionError("asked although another rule denied");
                    })
                .fired(SourceMissingRule.NAME),
            deny(
                    "the resolver cannot be asked: denied (fail closed)",
                    target(clone("apps/src"), "clone", "2Gi", null),
                    "the clone of apps/src could not be checked against Cinder: the resolver did not answer within 3000 ms; try again")
                .cinder(
                    (src, c) -> {
                      throw new CloneCheck.Unavailable(
                          "the resolver did not answer within 3000 ms", null);
                    })
                .fired(CinderCheckRule.UNAVAILABLE_NAME),
            allow(
                    "the resolver cannot be asked and the policy admits unchecked, with a warning",
                    target(clone("apps/src"), "clone", "2Gi", null),
                    null)
                .cinder(
                    (src, c) -> {
                      throw new CloneCheck.Unavailable(
                          "the resolver at http://127.0.0.1:8090/v1/clone-check cannot be reached",
                          null);
                    })
                .whenCinderCannotBeAsked(CheckUnavailable.ALLOW)
                .warns(
                    "the clone of apps/src could not be checked against Cinder: the resolver at"
                        + " http://127.0.0.1:8090/v1/clone-check cannot be reached; admitted"
                        + " unchecked by the cluster's policy")
                .fired(CinderCheckRule.UNAVAILABLE_NAME))
        .map(Arguments::of);
  }
}
