package org.standalonecinder.webhook.policy;

import org.standalonecinder.api.ClaimAnnotations;

/**
 * The mutating endpoint writes a same-namespace {@code <claim>} as {@code <namespace>/<claim>}, so
 * that the stored request says exactly which claim it names, wherever it is read.
 */
final class DefaultNamespaceRule implements ClaimRule {

  /** The rule's name in denials, warnings and metrics. */
  static final String NAME = "clone-request-namespace";

  @Override
  public void check(ClaimReview r, Findings f) {
    if (r.mutating
        && !r.isUpdate()
        && r.annotatedSource() != null
        && !r.annotation(ClaimAnnotations.CLONE_REQUEST).contains("/")
        && f.clean()) {
      f.replace(
          NAME,
          "/metadata/annotations/" + Findings.pointer(ClaimAnnotations.CLONE_REQUEST),
          r.annotatedSource().toString());
    }
  }
}
