package org.standalonecinder.provisioner.clone;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.api.CloneToken;
import org.standalonecinder.api.ReferenceGrants;
import org.standalonecinder.provisioner.controller.ProvisioningException;

/**
 * Whether a clone across namespaces may be made, checked when the clone is about to be made (for a
 * WaitForFirstConsumer claim that may be days after its admission): the source owner's consent as
 * it is now, or the webhook's token whose basis still holds.
 */
final class CloneConsent {

  private final ClusterReader cluster;

  CloneConsent(ClusterReader cluster) {
    this.cluster = cluster;
  }

  /**
   * Checks, when the clone is about to be made (for a WaitForFirstConsumer claim that may be days
   * after its admission), that a clone across namespaces may be made, on what the provisioner can
   * check itself or on a decision that came from the API server:
   *
   * <ol>
   *   <li>the source, as it is now, grants the clone to this namespace ({@code
   *       standalone-cinder.io/clone-grant}, or a ReferenceGrant in its namespace): its owner's
   *       consent needs no token, and so holds with the webhook bypassed, removed or let through
   *       ({@code failurePolicy: Ignore});
   *   <li>else the claim carries the webhook's token for this source and claim, the source is still
   *       the claim the webhook judged (its uid), and its basis still holds: the admin's policy
   *       allowed every clone, or the requester may still create pods in the source's namespace,
   *       and then only when the webhook authenticated the API server as the review's sender. Any
   *       pod that reaches the webhook can send it a review naming any requester, and a token given
   *       for that review can reach a claim through an update the webhook did not see.
   * </ol>
   *
   * @return the uid of the source claim this consent was read from (null within a namespace, where
   *     nothing is read): the clone is made of that claim or not at all
   * @throws ProvisioningException (final) when it may not
   */
  String verify(PersistentVolumeClaim target, ClaimRef source) {
    ClaimRef self =
        new ClaimRef(target.getMetadata().getNamespace(), target.getMetadata().getName());
    if (source.namespace().equals(self.namespace())) {
      return null;
    }
    String refused = "cloning " + source + " across namespaces is refused: ";
    AdminPolicy policy = policy(refused);
    if (policy.forbidsAll()) {
      throw ProvisioningException.invalid(
          refused + "the cluster's policy forbids clones across namespaces (crossNamespace: deny)");
    }
    PersistentVolumeClaim now = cluster.claim(source.namespace(), source.name()).orElse(null);
    if (now != null && consents(now, self.namespace())) {
      return now.getMetadata().getUid();
    }
    Map<String, String> ann = target.getMetadata().getAnnotations();
    String token = ann == null ? null : ann.get(ClaimAnnotations.CLONE_TOKEN);
    String noGrant =
        "the source does not grant the clone to "
            + self.namespace()
            + " (annotation "
            + ClaimAnnotations.CLONE_GRANT
            + ", or a ReferenceGrant in "
            + source.namespace()
            + ")";
    if (token == null) {
      throw ProvisioningException.invalid(
          refused + noGrant + "; and the claim carries no " + ClaimAnnotations.CLONE_TOKEN);
    }
    Optional<CloneToken.Keys> keys = cluster.cloneTokenKeys();
    if (keys.isEmpty()) {
      throw ProvisioningException.invalid(
          refused
              + noGrant
              + ", and no webhook has created the key of its tokens (Secret "
              + CloneToken.KEY_SECRET
              + "): install the webhook");
    }
    String created = target.getMetadata().getCreationTimestamp();
    CloneToken.Claims claims;
    try {
      claims =
          CloneToken.verify(
              token, keys.get(), source, self, created == null ? null : Instant.parse(created));
    } catch (CloneToken.InvalidTokenException e) {
      throw ProvisioningException.invalid(refused + noGrant + "; and " + e.getMessage());
    }
    if (now == null || !Objects.equals(now.getMetadata().getUid(), claims.sourceUid())) {
      // Said the same whether it is gone or another claim now: either way not what was judged.
      throw ProvisioningException.invalid(
          refused
              + "the source claim is not the one admitted (deleted, or deleted and created again"
              + " under its name, since); create this claim again to have the present one judged");
    }
    stillHolds(claims, source, self.namespace(), refused, noGrant, policy);
    return claims.sourceUid();
  }

  /**
   * The admin's policy as it is now.
   *
   * @throws ProvisioningException (to be retried) when it cannot be read as a policy
   */
  private AdminPolicy policy(String refused) {
    try {
      return AdminPolicy.of(cluster.clonePolicy());
    } catch (IllegalArgumentException e) {
      throw new ProvisioningException(
          refused
              + "the admin's clone policy (ConfigMap "
              + org.standalonecinder.api.ClonePolicyFile.CONFIG_MAP
              + ") cannot be read: "
              + e.getMessage()
              + "; clones across namespaces wait until it is fixed",
          false,
          e);
    }
  }

  /** The basis the webhook gave the token on, as it is now. */
  private void stillHolds(
      CloneToken.Claims claims,
      ClaimRef source,
      String namespace,
      String refused,
      String noGrant,
      AdminPolicy policy) {
    switch (claims.basis()) {
      case GRANT ->
          throw ProvisioningException.invalid(
              refused
                  + "the source no longer grants the clone to "
                  + namespace
                  + " (annotation "
                  + ClaimAnnotations.CLONE_GRANT
                  + ", or a ReferenceGrant in "
                  + source.namespace()
                  + ")");
      case REQUESTER -> {
        if (!claims.callerAuthenticated()) {
          throw ProvisioningException.invalid(
              refused
                  + noGrant
                  + ", and its token allows it on the requester's rights from a review whose"
                  + " sender the webhook did not authenticate (no --client-ca): anyone who"
                  + " reaches the webhook can name any requester");
        }
        if (!cluster.canCreatePods(claims.requester(), source.namespace())) {
          throw ProvisioningException.invalid(
              refused
                  + claims.requester().user()
                  + ", who asked for it, may no longer create pods in "
                  + source.namespace());
        }
      }
      case POLICY -> {
        if (!policy.allowsAll()) {
          throw ProvisioningException.invalid(
              refused
                  + noGrant
                  + ", and its token allows it on a policy that allowed every clone across"
                  + " namespaces, which the cluster's policy no longer does (crossNamespace: "
                  + policy.crossNamespace()
                  + "); create this claim again to have it judged under the present policy");
        }
      }
    }
  }

  /**
   * The source owner's consent as it is now: the source's grant annotation, or a ReferenceGrant in
   * its namespace (read only when the annotation does not say so already).
   */
  private boolean consents(PersistentVolumeClaim source, String namespace) {
    return grants(source, namespace)
        || ReferenceGrants.allowClaim(
            next -> cluster.referenceGrants(source.getMetadata().getNamespace(), next),
            namespace,
            source.getMetadata().getName());
  }

  private static boolean grants(PersistentVolumeClaim source, String namespace) {
    Map<String, String> ann = source.getMetadata().getAnnotations();
    return ClaimRef.grants(ann == null ? null : ann.get(ClaimAnnotations.CLONE_GRANT), namespace);
  }
}
