package org.standalonecinder.webhook.policy;

import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;

/** The CloneRequest syntax (clone-request-syntax): one named row a case. */
class CloneRequestSyntaxRuleTest extends ClaimRuleTable {

  @Override
  String rule() {
    return CloneRequestSyntaxRule.NAME;
  }

  static Stream<Arguments> rows() {
    return Stream.of(
            deny(
                "an empty CloneRequest is denied",
                target(clone(""), "clone", "2Gi", null),
                "k8s.io/CloneRequest '' must be <claim> or <namespace>/<claim>, each a valid"
                    + " Kubernetes name"),
            deny(
                "three parts are denied",
                target(clone("a/b/c"), "clone", "2Gi", null),
                "k8s.io/CloneRequest 'a/b/c' must be <claim> or <namespace>/<claim>, each a valid"
                    + " Kubernetes name"),
            deny(
                "upper case names are denied",
                target(clone("apps/Src"), "clone", "2Gi", null),
                "k8s.io/CloneRequest 'apps/Src' must be <claim> or <namespace>/<claim>, each a valid Kubernetes name"),
            // Reported whatever the lookups do: the user fixes the syntax, not the network.
            deny(
                    "a namespace, a claim and more, while the API server is unreachable",
                    target(clone("a/src/x"), "clone", "2Gi", null),
                    "k8s.io/CloneRequest 'a/src/x' must be <claim> or <namespace>/<claim>, each a"
                        + " valid Kubernetes name"
                        + REST_UNCHECKED
                        + "clone: Connection refused")
                .given(c -> c.unreachable = true)
                .fired(CloneRequestSyntaxRule.NAME, PolicyChain.RULE_LOOKUP_FAILED),
            deny(
                    "an invalid name, while the API server is unreachable",
                    target(clone("A_B"), "clone", "2Gi", null),
                    "k8s.io/CloneRequest 'A_B' must be <claim> or <namespace>/<claim>, each a valid Kubernetes name; the webhook could not check the rest of this request: cannot look up storageclass clone: Connection refused")
                .given(c -> c.unreachable = true)
                .fired(CloneRequestSyntaxRule.NAME, PolicyChain.RULE_LOOKUP_FAILED),
            deny(
                    "an empty request, while the API server is unreachable",
                    target(clone(""), "clone", "2Gi", null),
                    "k8s.io/CloneRequest '' must be <claim> or <namespace>/<claim>, each a valid Kubernetes name; the webhook could not check the rest of this request: cannot look up storageclass clone: Connection refused")
                .given(c -> c.unreachable = true)
                .fired(CloneRequestSyntaxRule.NAME, PolicyChain.RULE_LOOKUP_FAILED),
            deny(
                    "a malformed request and a CloneOf, while the API server is unreachable: both",
                    target(
                        Map.of(ClonePolicy.CLONE_REQUEST, "a/src/x", ClonePolicy.CLONE_OF, "y"),
                        "clone",
                        "2Gi",
                        null),
                    "k8s.io/CloneOf is set by the provisioner only; remove it; k8s.io/CloneRequest"
                        + " 'a/src/x' must be <claim> or <namespace>/<claim>, each a valid"
                        + " Kubernetes name"
                        + REST_UNCHECKED
                        + "clone: Connection refused")
                .given(c -> c.unreachable = true)
                .fired(
                    CloneRequestSyntaxRule.NAME, CloneOfRule.NAME, PolicyChain.RULE_LOOKUP_FAILED))
        .map(Arguments::of);
  }
}
