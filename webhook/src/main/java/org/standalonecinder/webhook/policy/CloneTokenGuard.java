package org.standalonecinder.webhook.policy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.webhook.admission.AdmissionController;
import org.standalonecinder.webhook.admission.Claim;
import org.standalonecinder.webhook.admission.Decision;
import org.standalonecinder.webhook.admission.ReviewRequest;

/**
 * Only the webhook's own decision makes a clone token, whatever the policy's mode, the namespace's
 * exemption or the claim's class: it wraps every other layer (audit mode, exemptions, scope). The
 * mutating endpoint removes a token a claim is created with before the rules see the claim (they
 * sign a new one when they accept a clone across namespaces), and the validating endpoint refuses
 * any change of the token after creation. A token obtained elsewhere (a review sent by hand to the
 * webhook's port) thus cannot ride on a claim through audit mode, an exempt namespace, or a claim
 * that becomes ours later.
 */
public final class CloneTokenGuard implements AdmissionController {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final AdmissionController rules;

  public CloneTokenGuard(AdmissionController rules) {
    this.rules = rules;
  }

  @Override
  public Decision review(ReviewRequest request, boolean mutating) {
    Claim claim = request.claim();
    if (claim == null || "DELETE".equals(request.operation())) {
      return rules.review(request, mutating);
    }
    String token = claim.annotation(ClaimAnnotations.CLONE_TOKEN);
    Claim old = request.oldClaim();
    if (old != null) {
      if (!mutating && !Objects.equals(token, old.annotation(ClaimAnnotations.CLONE_TOKEN))) {
        return Decision.deny(
            403,
            CloneTokenRule.NAME,
            ClaimAnnotations.CLONE_TOKEN
                + " cannot be added, changed or removed after the claim is created");
      }
      return rules.review(request, mutating);
    }
    if (!mutating || token == null) {
      return rules.review(request, mutating);
    }
    Map<String, String> annotations = new LinkedHashMap<>(claim.metadata().annotations());
    annotations.remove(ClaimAnnotations.CLONE_TOKEN);
    Decision d = rules.review(request.withObject(claim.withAnnotations(annotations)), true);
    if (!d.allowed()) {
      return d;
    }
    ArrayNode patch = JSON.createArrayNode();
    patch
        .addObject()
        .put("op", "remove")
        .put("path", "/metadata/annotations/" + Findings.pointer(ClaimAnnotations.CLONE_TOKEN));
    if (d.jsonPatch() != null) {
      try {
        JSON.readTree(d.jsonPatch()).forEach(patch::add);
      } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
        throw new IllegalStateException("the rules made a patch that is not JSON", e);
      }
    }
    List<String> warnings = new ArrayList<>(d.warnings());
    warnings.add(
        "the "
            + ClaimAnnotations.CLONE_TOKEN
            + " given was removed: only the webhook sets it, when it accepts a clone across"
            + " namespaces");
    List<String> named = new ArrayList<>(d.rules());
    if (!named.contains(CloneTokenRule.NAME)) {
      named.add(CloneTokenRule.NAME);
    }
    return Decision.allow(warnings, patch.toString(), named);
  }
}
