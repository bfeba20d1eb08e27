package org.standalonecinder.webhook.policy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.standalonecinder.webhook.admission.Claim;
import org.standalonecinder.webhook.admission.Decision;

/** What the claim rules found for one request, in the order they ran; then one decision. */
final class Findings {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final List<String> violations = new ArrayList<>();
  private final List<String> warnings = new ArrayList<>();
  private final Set<String> rules = new LinkedHashSet<>();
  private final ArrayNode patch = JSON.createArrayNode();
  private final boolean mutating;
  private LookupFailedException lookupFailed;

  Findings(boolean mutating) {
    this.mutating = mutating;
  }

  void deny(String rule, String message) {
    violations.add(message);
    rules.add(rule);
  }

  /**
   * A warning for what is allowed but suspicious. The API server shows the warnings of both
   * endpoints, so these come from the validating one only, which sees the final object.
   */
  void warn(String rule, String message) {
    if (!mutating) {
      warnings.add(message);
    }
    rules.add(rule);
  }

  /** A warning that explains a patch: from the mutating endpoint, which makes the patch. */
  void warnPatched(String rule, String message) {
    warnings.add(message);
    rules.add(rule);
  }

  void replace(String rule, String path, String value) {
    ObjectNode op = patch.addObject();
    op.put("op", "replace");
    op.put("path", path);
    op.put("value", value);
    rules.add(rule);
  }

  /** Sets an annotation whether or not it (or any annotation) exists yet. */
  void annotate(String rule, Claim claim, String key, String value) {
    ObjectNode op = patch.addObject();
    op.put("op", "add");
    // An empty map is not sent at all (omitempty): then the whole map is added; "add" over an
    // empty one replaces it, which is as good.
    if (claim.noAnnotations()) {
      op.put("path", "/metadata/annotations");
      op.putObject("value").put(key, value);
    } else {
      op.put("path", "/metadata/annotations/" + pointer(key));
      op.put("value", value);
    }
    rules.add(rule);
  }

  /** A lookup failed: the request cannot be allowed, whatever the other rules find. */
  void lookupFailed(LookupFailedException e) {
    if (lookupFailed == null) {
      lookupFailed = e;
    }
  }

  /** Nothing denied and nothing left unchecked so far: the rules that act last may act. */
  boolean clean() {
    return violations.isEmpty() && lookupFailed == null;
  }

  boolean hasViolations() {
    return !violations.isEmpty();
  }

  /** Whether any rule had anything to say (or could not say it). */
  boolean isEmpty() {
    return rules.isEmpty() && lookupFailed == null;
  }

  Decision decision() {
    if (lookupFailed != null) {
      String unchecked = "the webhook could not check this request, try again: ";
      if (violations.isEmpty()) {
        return Decision.deny(
            500, PolicyChain.RULE_LOOKUP_FAILED, unchecked + lookupFailed.getMessage());
      }
      // What the user can fix now comes first; the rest is checked once the lookup works again.
      List<String> named = new ArrayList<>(rules);
      named.add(PolicyChain.RULE_LOOKUP_FAILED);
      return new Decision(
          false,
          403,
          String.join("; ", violations)
              + "; the webhook could not check the rest of this request: "
              + lookupFailed.getMessage(),
          List.of(),
          null,
          named);
    }
    if (!violations.isEmpty()) {
      return new Decision(
          false, 403, String.join("; ", violations), List.of(), null, List.copyOf(rules));
    }
    return Decision.allow(warnings, patch.isEmpty() ? null : patch.toString(), List.copyOf(rules));
  }

  /** An annotation key as a JSON Pointer segment (RFC 6901). */
  static String pointer(String key) {
    return key.replace("~", "~0").replace("/", "~1");
  }
}
