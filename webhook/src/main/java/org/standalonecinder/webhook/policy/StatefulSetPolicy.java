package org.standalonecinder.webhook.policy;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.authentication.UserInfoBuilder;
import java.util.ArrayList;
import java.util.List;
import org.standalonecinder.webhook.admission.AdmissionController;
import org.standalonecinder.webhook.admission.Claim;
import org.standalonecinder.webhook.admission.Decision;
import org.standalonecinder.webhook.admission.ReviewRequest;

/**
 * Early word for a StatefulSet whose {@code volumeClaimTemplates} ask for clones: its claims are
 * created later by the statefulset controller, a deputy whose own rights do not count across
 * namespaces ({@link Requesters}), so a template that the claim rules would refuse for it is
 * refused here, at {@code kubectl apply}, with the claim rules' reason, rather than leaving the
 * StatefulSet's pods waiting on claims that are never made.
 *
 * <p>A convenience, not the enforcement: the claim rules judge each claim when the controller
 * creates it. So this check runs only the rules that look things up (never the Cinder check), and
 * its webhook entry lets StatefulSets through when the webhook is down or slow.
 */
public final class StatefulSetPolicy implements AdmissionController {

  /** The rule name of a denial of a StatefulSet (metrics, docs). */
  public static final String RULE = "statefulset-clone-templates";

  /** Who creates a StatefulSet's claims (kube-controller-manager with per-controller accounts). */
  static final String CONTROLLER = "system:serviceaccount:kube-system:statefulset-controller";

  private final AdmissionController claims;

  public StatefulSetPolicy(AdmissionController claims) {
    this.claims = claims;
  }

  @Override
  public Decision review(ReviewRequest request, boolean mutating) {
    if (mutating
        || !"CREATE".equals(request.operation())
        || !(request.object() instanceof StatefulSet sts)
        || sts.getSpec() == null
        || sts.getSpec().getVolumeClaimTemplates() == null) {
      // The templates cannot change after creation.
      return Decision.allow();
    }
    String ns =
        request.namespace() != null ? request.namespace() : sts.getMetadata().getNamespace();
    List<String> refusals = new ArrayList<>();
    for (PersistentVolumeClaim template : sts.getSpec().getVolumeClaimTemplates()) {
      if (template.getMetadata() == null || template.getMetadata().getName() == null) {
        continue;
      }
      // The claim of the first replica, as the controller will create it.
      String name = template.getMetadata().getName() + "-" + sts.getMetadata().getName() + "-0";
      PersistentVolumeClaim claim =
          new PersistentVolumeClaimBuilder(template)
              .editMetadata()
              .withNamespace(ns)
              .withName(name)
              .endMetadata()
              .build();
      Decision d =
          claims.review(
              new ReviewRequest(
                  request.uid(),
                  new ReviewRequest.Kind("", "v1", "PersistentVolumeClaim"),
                  name,
                  ns,
                  "CREATE",
                  new UserInfoBuilder().withUsername(CONTROLLER).build(),
                  Claim.of(claim),
                  null),
              // The mutating pass: every rule that looks things up, no Cinder check.
              true);
      if (!d.allowed()) {
        refusals.add(
            "volumeClaimTemplates "
                + template.getMetadata().getName()
                + ": the statefulset controller's claims would be refused: "
                + d.message());
      }
    }
    return refusals.isEmpty()
        ? Decision.allow()
        : Decision.deny(403, RULE, String.join("; ", refusals));
  }
}
