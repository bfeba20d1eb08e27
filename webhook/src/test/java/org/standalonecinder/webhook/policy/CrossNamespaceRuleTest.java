package org.standalonecinder.webhook.policy;

import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;
import org.standalonecinder.api.CloneToken.Basis;
import org.standalonecinder.webhook.policy.CrossNamespaceRule.CrossNamespace;

/** Clones across namespaces (clone-cross-namespace): one named row a case. */
class CrossNamespaceRuleTest extends ClaimRuleTable {

  @Override
  String rule() {
    return CrossNamespaceRule.NAME;
  }

  static final String STATEFULSET_CONTROLLER =
      "system:serviceaccount:kube-system:statefulset-controller";

  static Stream<Arguments> rows() {
    return Stream.of(
            deny(
                "cross-namespace without authorization is denied",
                target(clone("team-b/shared"), "clone", "1Gi", null),
                "cloning team-b/shared into namespace apps is not allowed: you may not create pods in team-b and the source grants no clone to apps (annotation standalone-cinder.io/clone-grant, or a ReferenceGrant in team-b)"),
            allow(
                    "cross-namespace by someone who may create pods there",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    stamped("team-b/shared", Basis.REQUESTER, "bob"))
                .by("bob")
                .fired(CloneTokenRule.NAME),
            allow(
                    "cross-namespace with a grant on the source",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    stamped("team-b/shared", Basis.GRANT, "alice"))
                .given(
                    c ->
                        c.claims
                            .get("team-b/shared")
                            .getMetadata()
                            .getAnnotations()
                            .put(ClonePolicy.CLONE_GRANT, "ops, apps"))
                .fired(CloneTokenRule.NAME),
            allow(
                    "cross-namespace with a ReferenceGrant in the source's namespace",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    stamped("team-b/shared", Basis.GRANT, "alice"))
                .given(
                    c ->
                        c.referenceGrants.put(
                            "team-b", java.util.List.of(referenceGrant("apps", "shared"))))
                .fired(CloneTokenRule.NAME),
            allow(
                    "a webhook that authenticates nobody reads no ReferenceGrant: the provisioner"
                        + " does when it clones",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    null)
                .by("bob")
                .given(
                    c -> {
                      c.caller = null;
                      c.unreachableButClasses = true;
                      c.referenceGrants.put(
                          "team-b", java.util.List.of(referenceGrant("apps", null)));
                    })
                .warns(UNCHECKED_ACROSS)
                .fired(UncheckedSourceRule.NAME),
            deny(
                    "a ReferenceGrant for another claim does not count",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    "cloning team-b/shared into namespace apps is not allowed: you may not create pods in team-b and the source grants no clone to apps (annotation standalone-cinder.io/clone-grant, or a ReferenceGrant in team-b)")
                .given(
                    c ->
                        c.referenceGrants.put(
                            "team-b", java.util.List.of(referenceGrant("apps", "other")))),
            deny(
                    "the attack: a ReferenceGrant made in the requester's own namespace",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    "cloning team-b/shared into namespace apps is not allowed: you may not create pods in team-b and the source grants no clone to apps (annotation standalone-cinder.io/clone-grant, or a ReferenceGrant in team-b)")
                .given(
                    c ->
                        c.referenceGrants.put(
                            "apps", java.util.List.of(referenceGrant("apps", null)))),
            deny(
                    "a ReferenceGrant does not reveal a source that does not exist",
                    target(clone("team-b/ghost"), "clone", "1Gi", null),
                    "cloning team-b/ghost into namespace apps is not allowed: you may not create pods in team-b and the source grants no clone to apps (annotation standalone-cinder.io/clone-grant, or a ReferenceGrant in team-b)")
                .given(
                    c ->
                        c.referenceGrants.put(
                            "team-b", java.util.List.of(referenceGrant("apps", null)))),
            deny(
                    "a grant to another namespace does not count",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    "cloning team-b/shared into namespace apps is not allowed: you may not create pods in team-b and the source grants no clone to apps (annotation standalone-cinder.io/clone-grant, or a ReferenceGrant in team-b)")
                .given(
                    c ->
                        c.claims
                            .get("team-b/shared")
                            .getMetadata()
                            .getAnnotations()
                            .put(ClonePolicy.CLONE_GRANT, "ops")),
            allow(
                    "the attack: a webhook that authenticates nobody neither takes the rights of"
                        + " whom a review names nor signs a token, since any pod could have written"
                        + " it",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    null)
                .by("bob")
                .given(
                    c -> {
                      c.caller = null;
                      c.unreachableButClasses = true;
                    })
                .warns(UNCHECKED_ACROSS)
                .fired(UncheckedSourceRule.NAME),
            allow(
                    "a webhook that authenticates nobody admits what the source grants unsigned:"
                        + " the provisioner asks the grant itself",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    null)
                .by("bob")
                .given(
                    c -> {
                      c.caller = null;
                      c.unreachableButClasses = true;
                      c.claims
                          .get("team-b/shared")
                          .getMetadata()
                          .getAnnotations()
                          .put(ClonePolicy.CLONE_GRANT, "apps");
                    })
                .warns(UNCHECKED_ACROSS)
                .fired(UncheckedSourceRule.NAME),
            deny(
                    "a webhook that authenticates nobody still applies a policy that forbids every"
                        + " clone across namespaces",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    "cloning team-b/shared into namespace apps is not allowed: the cluster's policy forbids clones across namespaces")
                .given(
                    c -> {
                      c.caller = null;
                      c.unreachableButClasses = true;
                    })
                .crossNamespace(CrossNamespace.DENY),
            deny(
                    "cross-namespace denied by policy even for bob",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    "cloning team-b/shared into namespace apps is not allowed: the cluster's policy forbids clones across namespaces")
                .by("bob")
                .crossNamespace(CrossNamespace.DENY),
            allow(
                    "cross-namespace allowed by policy, with a warning",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    stamped("team-b/shared", Basis.POLICY, "alice"))
                .crossNamespace(CrossNamespace.ALLOW)
                .warns(
                    "cloning team-b/shared into namespace apps without an authorization check: the"
                        + " cluster's policy allows every clone across namespaces")
                .fired(CrossNamespaceRule.NAME, CloneTokenRule.NAME),
            deny(
                    "a service account that may create pods in the source's namespace is a deputy:"
                        + " its own rights do not count",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    "cloning team-b/shared into namespace apps is not allowed: the claim is created by system:serviceaccount:kube-system:statefulset-controller, a controller acting for someone else, so its own rights in team-b do not count; the source must grant the clone to apps (annotation standalone-cinder.io/clone-grant, or a ReferenceGrant in team-b), or the admin may trust this controller (policy trustedDeputies)")
                .by(STATEFULSET_CONTROLLER)
                .given(c -> c.podCreators.put("team-b", Set.of(STATEFULSET_CONTROLLER))),
            deny(
                    "the controller manager with its own credentials is a deputy too",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    "cloning team-b/shared into namespace apps is not allowed: the claim is created by system:kube-controller-manager, a controller acting for someone else, so its own rights in team-b do not count; the source must grant the clone to apps (annotation standalone-cinder.io/clone-grant, or a ReferenceGrant in team-b), or the admin may trust this controller (policy trustedDeputies)")
                .by("system:kube-controller-manager")
                .given(c -> c.podCreators.put("team-b", Set.of("system:kube-controller-manager"))),
            deny(
                    "a node is a deputy",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    "cloning team-b/shared into namespace apps is not allowed: the claim is created by system:node:worker-1, a controller acting for someone else, so its own rights in team-b do not count; the source must grant the clone to apps (annotation standalone-cinder.io/clone-grant, or a ReferenceGrant in team-b), or the admin may trust this controller (policy trustedDeputies)")
                .by("system:node:worker-1")
                .given(c -> c.podCreators.put("team-b", Set.of("system:node:worker-1"))),
            allow(
                    "a deputy clones what the source grants to the namespace",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    stamped("team-b/shared", Basis.GRANT, STATEFULSET_CONTROLLER))
                .by(STATEFULSET_CONTROLLER)
                .given(
                    c ->
                        c.claims
                            .get("team-b/shared")
                            .getMetadata()
                            .getAnnotations()
                            .put(ClonePolicy.CLONE_GRANT, "apps"))
                .fired(CloneTokenRule.NAME),
            allow(
                    "a deputy the admin trusts clones on its own rights",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    stamped("team-b/shared", Basis.REQUESTER, STATEFULSET_CONTROLLER))
                .by(STATEFULSET_CONTROLLER)
                .given(c -> c.podCreators.put("team-b", Set.of(STATEFULSET_CONTROLLER)))
                .trusting(STATEFULSET_CONTROLLER)
                .fired(CloneTokenRule.NAME),
            allow(
                    "a review whose groups hold a null is judged, not crashed on",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    stamped("team-b/shared", Basis.REQUESTER, "bob"))
                .by("bob")
                .given(c -> c.nullGroup = true)
                .fired(CloneTokenRule.NAME),
            deny(
                    "a user the admin names a deputy is one",
                    target(clone("team-b/shared"), "clone", "1Gi", null),
                    "cloning team-b/shared into namespace apps is not allowed: the claim is created by bob, a controller acting for someone else, so its own rights in team-b do not count; the source must grant the clone to apps (annotation standalone-cinder.io/clone-grant, or a ReferenceGrant in team-b), or the admin may trust this controller (policy trustedDeputies)")
                .by("bob")
                .deputies("bob"),
            deny(
                "a missing cross-namespace source looks like a forbidden one",
                target(clone("team-b/ghost"), "clone", "1Gi", null),
                "cloning team-b/ghost into namespace apps is not allowed: you may not create pods in team-b and the source grants no clone to apps (annotation standalone-cinder.io/clone-grant, or a ReferenceGrant in team-b)"),
            deny(
                    "an authorized user learns that a cross-namespace source is missing",
                    target(clone("team-b/ghost"), "clone", "1Gi", null),
                    "source claim team-b/ghost does not exist")
                .by("bob")
                .fired(SourceMissingRule.NAME),
            deny(
                "a native clone from another namespace is checked like an annotated one",
                withDataSource(
                    target(Map.of(), "clone", "1Gi", null),
                    null,
                    "PersistentVolumeClaim",
                    "shared",
                    "team-b"),
                "cloning team-b/shared into namespace apps is not allowed: you may not create pods in team-b and the source grants no clone to apps (annotation standalone-cinder.io/clone-grant, or a ReferenceGrant in team-b)"),
            allow(
                    "a native clone from another namespace by an authorized user",
                    withDataSource(
                        target(Map.of(), "clone", "1Gi", null),
                        null,
                        "PersistentVolumeClaim",
                        "shared",
                        "team-b"),
                    stampedIntoNoAnnotations("team-b/shared", Basis.REQUESTER, "bob"))
                .by("bob")
                .fired(CloneTokenRule.NAME))
        .map(Arguments::of);
  }

  static final String UNCHECKED_ACROSS =
      "source claim team-b/shared, and whether it grants the clone to apps, is checked by the"
          + " provisioner when it clones, and the claim's events say why it waits (kubectl describe"
          + " pvc): this webhook does not look at claims, as it does not authenticate the API"
          + " server as the sender of its reviews (serve --client-ca)";

  /** A ReferenceGrant's spec: claims of {@code from} may use claim {@code to} (all when null). */
  static Map<String, Object> referenceGrant(String from, String to) {
    Map<String, Object> target =
        new java.util.HashMap<>(Map.of("group", "", "kind", "PersistentVolumeClaim"));
    if (to != null) {
      target.put("name", to);
    }
    return Map.of(
        "from",
        java.util.List.of(Map.of("group", "", "kind", "PersistentVolumeClaim", "namespace", from)),
        "to",
        java.util.List.of(target));
  }
}
