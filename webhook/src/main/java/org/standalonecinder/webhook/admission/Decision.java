package org.standalonecinder.webhook.admission;

import java.util.List;

/**
 * The answer to one admission request, without any transport in it.
 *
 * @param allowed whether the object may be stored
 * @param code the HTTP-like status shown to the user when denied (403 for policy, 400 for bad
 *     input)
 * @param message why it was denied, saying what to change; null when allowed
 * @param warnings shown to kubectl users even when allowed
 * @param jsonPatch a JSON Patch (RFC 6902) to apply, or null
 * @param rules the names of the rules that denied, warned or patched (documented in
 *     docs/webhook.md; metrics count decisions by them), empty when none had anything to say
 */
public record Decision(
    boolean allowed,
    int code,
    String message,
    List<String> warnings,
    String jsonPatch,
    List<String> rules) {

  public Decision {
    warnings = warnings == null ? List.of() : List.copyOf(warnings);
    rules = rules == null ? List.of() : List.copyOf(rules);
  }

  public static Decision allow() {
    return new Decision(true, 200, null, List.of(), null, List.of());
  }

  /** Allowed, with warnings and/or a patch; {@code rules} name who produced them. */
  public static Decision allow(List<String> warnings, String jsonPatch, List<String> rules) {
    return new Decision(true, 200, null, warnings, jsonPatch, rules);
  }

  public static Decision deny(int code, String rule, String message) {
    return new Decision(false, code, message, List.of(), null, List.of(rule));
  }
}
