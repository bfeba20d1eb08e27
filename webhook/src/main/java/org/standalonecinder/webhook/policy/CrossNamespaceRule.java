package org.standalonecinder.webhook.policy;

import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.webhook.policy.ClonePolicy.CrossNamespace;

/**
 * Default-deny across namespaces: whoever may create pods in the source's namespace can mount the
 * source and read it anyway, so may clone it; so may a namespace the source grants. A controller
 * that creates claims for users ({@link Requesters}) needs the grant: its own rights are not its
 * users'. The denial is the same whether the source exists or not, so the webhook cannot be used to
 * probe namespaces.
 */
final class CrossNamespaceRule implements ClaimRule {

  @Override
  public void check(ClaimReview r, Findings f) {
    if (r.isUpdate() || !r.crossNamespace()) {
      return;
    }
    ClaimRef src = r.source();
    String into = "cloning " + src + " into namespace " + r.namespace;
    if (!r.crossNamespaceAllowed()) {
      f.deny(
          ClonePolicy.RULE_CROSS_NAMESPACE,
          r.settings.crossNamespace() == CrossNamespace.DENY
              ? into + " is not allowed: the cluster's policy forbids clones across namespaces"
              : r.byUntrustedDeputy()
                  ? into
                      + " is not allowed: the claim is created by "
                      + r.request.getUserInfo().getUsername()
                      + ", a controller acting for someone else, so its own rights in "
                      + src.namespace()
                      + " do not count; the source must grant the clone to "
                      + r.namespace
                      + " (annotation "
                      + ClonePolicy.CLONE_GRANT
                      + "), or the admin may trust this controller (policy trustedDeputies)"
                  : into
                      + " is not allowed: you may not create pods in "
                      + src.namespace()
                      + " and the source grants no clone to "
                      + r.namespace
                      + " (annotation "
                      + ClonePolicy.CLONE_GRANT
                      + ")");
    } else if (r.settings.crossNamespace() == CrossNamespace.ALLOW) {
      f.warn(
          ClonePolicy.RULE_CROSS_NAMESPACE,
          into
              + " without an authorization check: the cluster's policy allows every clone"
              + " across namespaces");
    }
  }
}
