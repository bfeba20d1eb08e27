package org.standalonecinder.webhook.policy;

import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import org.standalonecinder.webhook.admission.AdmissionController;
import org.standalonecinder.webhook.admission.Claim;
import org.standalonecinder.webhook.admission.Decision;
import org.standalonecinder.webhook.admission.ReviewRequest;
import org.standalonecinder.webhook.metrics.AdmissionMetrics;

/**
 * Puts the rules together as the policy file says: claims to {@link ClonePolicy}, StorageClasses to
 * {@link StorageClassPolicy}, everything else allowed; exempt namespaces around them, metrics
 * around that, audit mode around that, so that metrics see what would have been denied, and the
 * clone token guard outermost.
 */
public final class PolicyChain {

  /** The rule name of a denial because a lookup failed (metrics, docs). */
  public static final String RULE_LOOKUP_FAILED = "lookup-failed";

  private PolicyChain() {}

  /**
   * @param provisionerName our provisioner's name
   * @param provisionerUser the provisioner's service account user (may set {@code k8s.io/CloneOf})
   * @param check asks Cinder (through the resolver) whether a clone can be made
   * @param tokenKeys sign cross-namespace clone tokens; null for none
   * @param caller whom the server authenticates as the sender of every review, or null for nobody
   *     ({@link ClonePolicy.Settings#caller()})
   */
  public static AdmissionController build(
      PolicyConfig config,
      String provisionerName,
      String provisionerUser,
      ClusterView cluster,
      CloneCheck check,
      org.standalonecinder.api.CloneToken.Keys tokenKeys,
      Clock clock,
      MeterRegistry registry,
      String caller) {
    ClonePolicy claims =
        new ClonePolicy(
            new ClonePolicy.Settings(
                provisionerName,
                provisionerUser,
                config.crossNamespace(),
                config.undersizedClone(),
                config.cinderCheckUnavailable(),
                config.requesters(),
                caller),
            cluster,
            check,
            tokenKeys,
            clock);
    StorageClassPolicy classes =
        new StorageClassPolicy(provisionerName, config.smartcloneClasses());
    StatefulSetPolicy statefulSets = new StatefulSetPolicy(claims);
    AdmissionController byKind =
        (request, mutating) -> {
          try {
            return dispatch(claims, classes, statefulSets, request, mutating);
          } catch (LookupFailedException e) {
            return Decision.deny(
                500,
                RULE_LOOKUP_FAILED,
                "the webhook could not check this request, try again: " + e.getMessage());
          }
        };
    AdmissionController chain =
        new AdmissionMetrics(
            new ExemptNamespaces(byKind, config.exemptNamespaces(), cluster),
            registry,
            config.enforce() ? "enforce" : "audit");
    // The token guard is outermost: no mode, exemption or scope lets a token of another origin
    // through.
    return new CloneTokenGuard(config.enforce() ? chain : new AuditMode(chain));
  }

  private static Decision dispatch(
      ClonePolicy claims,
      StorageClassPolicy classes,
      StatefulSetPolicy statefulSets,
      ReviewRequest request,
      boolean mutating) {
    Object object = request.object() != null ? request.object() : request.oldObject();
    if (object instanceof Claim) {
      return claims.review(request, mutating);
    }
    if (object instanceof StorageClass) {
      return classes.review(request, mutating);
    }
    if (object instanceof io.fabric8.kubernetes.api.model.apps.StatefulSet) {
      return statefulSets.review(request, mutating);
    }
    // The webhook configurations send only these kinds; anything else is not ours to judge.
    return Decision.allow();
  }
}
