package org.standalonecinder.webhook.policy;

/**
 * The mutating endpoint writes a same-namespace {@code <claim>} as {@code <namespace>/<claim>}, so
 * that the stored request says exactly which claim it names, wherever it is read.
 */
final class DefaultNamespaceRule implements ClaimRule {

  @Override
  public void check(ClaimReview r, Findings f) {
    if (r.mutating
        && !r.isUpdate()
        && r.annotatedSource() != null
        && !r.annotation(ClonePolicy.CLONE_REQUEST).contains("/")
        && f.clean()) {
      f.replace(
          ClonePolicy.RULE_DEFAULT_NAMESPACE,
          "/metadata/annotations/" + Findings.pointer(ClonePolicy.CLONE_REQUEST),
          r.annotatedSource().toString());
    }
  }
}
