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
 * its webhook entry lets StatefulSets through when the webhook is down or slow. And the work one
 * StatefulSet can cause is bounded (a dry run costs what a create does, and anyone may send dry
 * runs or forged reviews with hundreds of templates): templates that would make the same claim but
 * for their name are judged once, and at most {@link #MAX_JUDGED} distinct ones are; the rest are
 * said to be left to the claim rules, in a warning.
 */
public final class StatefulSetPolicy implements AdmissionController {

  /** The rule name of a denial of a StatefulSet (metrics, docs). */
  public static final String RULE = "statefulset-clone-templates";

  /** Who creates a StatefulSet's claims (kube-controller-manager with per-controller accounts). */
  static final String CONTROLLER = "system:serviceaccount:kube-system:statefulset-controller";

  /** At most this many distinct templates of one StatefulSet are judged (a few is the norm). */
  static final int MAX_JUDGED = 16;

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
    // What each distinct template (its claim but for the name) was told, judged once, and the
    // names of the templates that share it.
    java.util.Map<PersistentVolumeClaim, Decision> judged = new java.util.LinkedHashMap<>();
    java.util.Map<PersistentVolumeClaim, List<String>> names = new java.util.HashMap<>();
    int unjudged = 0;
    for (PersistentVolumeClaim template : sts.getSpec().getVolumeClaimTemplates()) {
      if (template.getMetadata() == null || template.getMetadata().getName() == null) {
        continue;
      }
      PersistentVolumeClaim unnamed =
          new PersistentVolumeClaimBuilder(template)
              .editMetadata()
              .withName(null)
              .endMetadata()
              .build();
      if (!judged.containsKey(unnamed)) {
        if (judged.size() >= MAX_JUDGED) {
          unjudged++;
          continue;
        }
        judged.put(unnamed, judge(request, sts, ns, template));
      }
      names.computeIfAbsent(unnamed, k -> new ArrayList<>()).add(template.getMetadata().getName());
    }
    List<String> refusals = new ArrayList<>();
    judged.forEach(
        (template, d) -> {
          if (!d.allowed()) {
            refusals.add(
                "volumeClaimTemplates "
                    + listed(names.get(template))
                    + ": the statefulset controller's claims would be refused: "
                    + d.message());
          }
        });
    if (refusals.isEmpty() && unjudged > 0) {
      return Decision.allow(
          List.of(
              unjudged
                  + " volumeClaimTemplates past the first "
                  + MAX_JUDGED
                  + " distinct ones were not checked here; their claims are judged when the"
                  + " statefulset controller creates them"),
          null,
          List.of(RULE));
    }
    return refusals.isEmpty()
        ? Decision.allow()
        : Decision.deny(403, RULE, String.join("; ", refusals));
  }

  /** Names as a denial lists them: three at most, then how many more. */
  private static String listed(List<String> names) {
    return names.size() <= 3
        ? String.join(", ", names)
        : String.join(", ", names.subList(0, 3)) + " and " + (names.size() - 3) + " more";
  }

  /** The claim rules on the first replica's claim of {@code template}, as the controller's. */
  private Decision judge(
      ReviewRequest request, StatefulSet sts, String ns, PersistentVolumeClaim template) {
    String name = template.getMetadata().getName() + "-" + sts.getMetadata().getName() + "-0";
    PersistentVolumeClaim claim =
        new PersistentVolumeClaimBuilder(template)
            .editMetadata()
            .withNamespace(ns)
            .withName(name)
            .endMetadata()
            .build();
    return claims.review(
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
  }
}
