package org.standalonecinder.webhook.policy;

import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;
import org.standalonecinder.webhook.policy.ClonePolicy.CrossNamespace;

/** Clones across namespaces (clone-cross-namespace): one named row a case. */
class CrossNamespaceRuleTest extends ClaimRuleTable {

  static Stream<Arguments> rows() {
    return Stream.of(
            deny(
                "cross-namespace without authorization is denied",
                target(clone("team-b/shared"), "clone", "1Gi", null),
                "cloning team-b/shared into namespace apps is not allowed: you may not create pods in team-b and the source grants no clone to apps"),
            allow(
                    "cross-namespace by someone who may create pods there",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    stamped("team-b/shared"))
                .by("bob"),
            allow(
                    "cross-namespace with a grant on the source",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    stamped("team-b/shared"))
                .given(
                    c ->
                        c.claims
                            .get("team-b/shared")
                            .getMetadata()
                            .getAnnotations()
                            .put(ClonePolicy.CLONE_GRANT, "ops, apps")),
            deny(
                    "a grant to another namespace does not count",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    "grants no clone to apps")
                .given(
                    c ->
                        c.claims
                            .get("team-b/shared")
                            .getMetadata()
                            .getAnnotations()
                            .put(ClonePolicy.CLONE_GRANT, "ops")),
            deny(
                    "cross-namespace denied by policy even for bob",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    "cloning team-b/shared into namespace apps is not allowed: the cluster's policy forbids clones across namespaces")
                .by("bob")
                .crossNamespace(CrossNamespace.DENY),
            allow(
                    "cross-namespace allowed by policy, with a warning",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    stamped("team-b/shared"))
                .crossNamespace(CrossNamespace.ALLOW)
                .warns(
                    "cloning team-b/shared into namespace apps without an authorization check: the"
                        + " cluster's policy allows every clone across namespaces"),
            deny(
                "a missing cross-namespace source looks like a forbidden one",
                target(clone("team-b/ghost"), "clone", "1Gi", null),
                "is not allowed: you may not create pods in team-b"),
            deny(
                    "an authorized user learns that a cross-namespace source is missing",
                    target(clone("team-b/ghost"), "clone", "1Gi", null),
                    "source claim team-b/ghost does not exist")
                .by("bob"),
            deny(
                "a native clone from another namespace is checked like an annotated one",
                withDataSource(
                    target(Map.of(), "clone", "1Gi", null),
                    null,
                    "PersistentVolumeClaim",
                    "shared",
                    "team-b"),
                "cloning team-b/shared into namespace apps is not allowed"),
            allow(
                    "a native clone from another namespace by an authorized user",
                    withDataSource(
                        target(Map.of(), "clone", "1Gi", null),
                        null,
                        "PersistentVolumeClaim",
                        "shared",
                        "team-b"),
                    stampedIntoNoAnnotations("team-b/shared"))
                .by("bob"))
        .map(Arguments::of);
  }
}
