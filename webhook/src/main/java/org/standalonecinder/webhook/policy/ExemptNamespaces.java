package org.standalonecinder.webhook.policy;

import org.standalonecinder.webhook.admission.AdmissionController;
import org.standalonecinder.webhook.admission.Decision;
import org.standalonecinder.webhook.admission.ReviewRequest;

/**
 * Leaves requests in the admin's exempt namespaces (selected by namespace labels) to the API server
 * alone. Cluster-scoped objects (StorageClasses) are never exempt.
 */
public final class ExemptNamespaces implements AdmissionController {

  /** The rule name a decision carries when the namespace is exempt (metrics, docs). */
  public static final String RULE = "exempt-namespace";

  private final AdmissionController rules;
  private final LabelSelector exempt;
  private final ClusterView cluster;

  public ExemptNamespaces(AdmissionController rules, LabelSelector exempt, ClusterView cluster) {
    this.rules = rules;
    this.exempt = exempt;
    this.cluster = cluster;
  }

  @Override
  public Decision review(ReviewRequest request, boolean mutating) {
    Decision d = rules.review(request, mutating);
    // The namespace is looked up only when the rules had something to say: most requests then
    // need no lookup at all, and none at all when nothing is exempt.
    if (d.rules().isEmpty() || exempt == LabelSelector.NOTHING) {
      return d;
    }
    String ns = request.namespace();
    if (ns != null && !ns.isEmpty() && exempt.matches(cluster.namespaceLabels(ns))) {
      return Decision.allow(java.util.List.of(), null, java.util.List.of(RULE));
    }
    return d;
  }
}
