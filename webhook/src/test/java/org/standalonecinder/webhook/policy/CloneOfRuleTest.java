package org.standalonecinder.webhook.policy;

import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/** CloneOf set by the provisioner only (clone-of-provisioner-only): one named row a case. */
class CloneOfRuleTest extends ClaimRuleTable {

  @Override
  String rule() {
    return CloneOfRule.NAME;
  }

  static Stream<Arguments> rows() {
    return Stream.of(
            deny(
                "CloneOf set by a user is denied",
                target(Map.of(ClonePolicy.CLONE_OF, "apps/src"), "clone", "2Gi", null),
                "k8s.io/CloneOf is set by the provisioner only; remove it"),
            allow(
                    "CloneOf set by the provisioner is allowed",
                    target(Map.of(ClonePolicy.CLONE_OF, "apps/src"), "clone", "2Gi", null),
                    null)
                .by(SA),
            deny(
                    "CloneOf added by a user on update is denied",
                    target(Map.of(ClonePolicy.CLONE_OF, "x"), "clone", "2Gi", null),
                    "k8s.io/CloneOf is set by the provisioner only; do not change it")
                .updating(target(Map.of(), "clone", "2Gi", null)),
            deny(
                    "CloneOf removed by a user on update is denied",
                    target(clone("apps/src"), "clone", "2Gi", null),
                    "k8s.io/CloneOf is set by the provisioner only; do not change it")
                .updating(
                    target(
                        Map.of(
                            ClonePolicy.CLONE_REQUEST,
                            "apps/src",
                            ClonePolicy.CLONE_OF,
                            "apps/src"),
                        "clone",
                        "2Gi",
                        null)),
            allow(
                    "CloneOf added by the provisioner on update is allowed",
                    target(
                        Map.of(
                            ClonePolicy.CLONE_REQUEST,
                            "apps/src",
                            ClonePolicy.CLONE_OF,
                            "apps/src"),
                        "clone",
                        "2Gi",
                        null),
                    null)
                .updating(target(clone("apps/src"), "clone", "2Gi", null))
                .by(SA))
        .map(Arguments::of);
  }
}
