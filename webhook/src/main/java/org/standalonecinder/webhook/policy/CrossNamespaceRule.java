package org.standalonecinder.webhook.policy;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import java.util.Optional;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.api.CloneToken;

/**
 * Default-deny across namespaces: a namespace the source grants may clone it (its annotation, or a
 * ReferenceGrant in its namespace); so may whoever may create pods in the source's namespace (they
 * can mount the source and read it anyway). A controller that creates claims for users ({@link
 * Requesters}) needs the grant: its own rights are not its users'. The denial is the same whether
 * the source exists or not. All this is judged only where the webhook authenticates the API server
 * as the sender of its reviews ({@link ClaimReview#looksAtSource()}): otherwise a review's
 * requester is whatever its sender wrote, and the provisioner asks the source's consent itself.
 */
final class CrossNamespaceRule implements ClaimRule {

  /** The rule's name in denials, warnings and metrics. */
  static final String NAME = "clone-cross-namespace";

  /** Who may clone across namespaces. */
  public enum CrossNamespace {
    /** Only a requester who may create pods in the source namespace, or a granted namespace. */
    AUTHORIZED,
    /** Never. */
    DENY,
    /** Anyone who may create claims (the Go provisioner's behaviour; unsafe, so it warns). */
    ALLOW
  }

  @Override
  public void check(ClaimReview r, Findings f) {
    if (r.isUpdate() || !r.crossNamespace()) {
      return;
    }
    ClaimRef src = r.source();
    String into = "cloning " + src + " into namespace " + r.namespace;
    if (r.settings.crossNamespace() == CrossNamespace.DENY) {
      f.deny(NAME, into + " is not allowed: the cluster's policy forbids clones across namespaces");
    } else if (r.settings.crossNamespace() == CrossNamespace.ALLOW) {
      f.warn(
          NAME,
          into
              + " without an authorization check: the cluster's policy allows every clone"
              + " across namespaces");
    } else if (!r.looksAtSource()) {
      // Nothing to decide here: the provisioner asks the source's consent when it clones
      // (UncheckedSourceRule says so).
      return;
    } else if (!r.crossNamespaceAllowed()) {
      f.deny(
          NAME,
          byUntrustedDeputy(r)
              ? into
                  + " is not allowed: the claim is created by "
                  + r.request.userInfo().getUsername()
                  + ", a controller acting for someone else, so its own rights in "
                  + src.namespace()
                  + " do not count; the source must grant the clone to "
                  + r.namespace
                  + " (annotation "
                  + ClaimAnnotations.CLONE_GRANT
                  + ", or a ReferenceGrant in "
                  + src.namespace()
                  + "), or the admin may trust this controller (policy trustedDeputies)"
              : into
                  + " is not allowed: you may not create pods in "
                  + src.namespace()
                  + " and the source grants no clone to "
                  + r.namespace
                  + " (annotation "
                  + ClaimAnnotations.CLONE_GRANT
                  + ", or a ReferenceGrant in "
                  + src.namespace()
                  + ")");
    }
  }

  /**
   * On what a clone across namespaces is allowed, empty when it is not: the policy, the source's
   * grant to the target namespace, or the requester's right to create pods in the source's
   * namespace (never a deputy's own right: it says nothing of the user it acts for). {@link
   * ClaimReview} asks once and every rule reads the answer, so a source in a namespace the
   * requester may not clone from is not even said to exist.
   */
  static Optional<CloneToken.Basis> decide(ClaimReview r) {
    return switch (r.settings.crossNamespace()) {
      case ALLOW -> Optional.of(CloneToken.Basis.POLICY);
      case DENY -> Optional.empty();
      case AUTHORIZED -> {
        if (!r.looksAtSource()) {
          yield Optional.empty();
        }
        if (r.sourceClaim().map(s -> grants(s, r.namespace)).orElse(false)
            || (r.sourceClaim().isPresent() && r.referenceGranted())) {
          yield Optional.of(CloneToken.Basis.GRANT);
        }
        // A deputy's own rights say nothing of the user it acts for: only the source's consent.
        if (r.request.userInfo() != null
            && !byUntrustedDeputy(r)
            && r.requesterCanCreatePods(r.source().namespace())) {
          yield Optional.of(CloneToken.Basis.REQUESTER);
        }
        yield Optional.empty();
      }
    };
  }

  /** Whether the source's clone grant names the namespace. */
  static boolean grants(PersistentVolumeClaim source, String namespace) {
    return ClaimRef.grants(ClaimReview.annotation(source, ClaimAnnotations.CLONE_GRANT), namespace);
  }

  /**
   * Whether the requester is a controller acting for someone else, whose own rights therefore do
   * not count for a clone across namespaces ({@link Requesters}).
   */
  static boolean byUntrustedDeputy(ClaimReview r) {
    return r.request.userInfo() != null
        && r.settings.requesters().untrustedDeputy(r.request.userInfo());
  }
}
