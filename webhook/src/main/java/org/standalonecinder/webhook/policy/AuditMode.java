package org.standalonecinder.webhook.policy;

import java.util.ArrayList;
import java.util.List;
import org.standalonecinder.webhook.admission.AdmissionController;
import org.standalonecinder.webhook.admission.Decision;
import org.standalonecinder.webhook.admission.ReviewRequest;

/**
 * Audit mode: what the rules would deny is allowed with a warning instead, so an admin can see the
 * effect of the policy before enforcing it. Patches (defaulting) still apply.
 */
public final class AuditMode implements AdmissionController {

  private final AdmissionController rules;

  public AuditMode(AdmissionController rules) {
    this.rules = rules;
  }

  @Override
  public Decision review(ReviewRequest request, boolean mutating) {
    Decision d = rules.review(request, mutating);
    if (d.allowed()) {
      return d;
    }
    if (mutating) {
      // The validating endpoint, which sees the final object, says it: once, not twice.
      return Decision.allow(d.warnings(), null, d.rules());
    }
    List<String> warnings = new ArrayList<>(d.warnings());
    warnings.add("standalone-cinder policy (audit mode) would deny this: " + d.message());
    return Decision.allow(warnings, null, d.rules());
  }
}
