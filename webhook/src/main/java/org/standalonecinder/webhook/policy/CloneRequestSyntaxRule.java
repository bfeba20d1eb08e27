package org.standalonecinder.webhook.policy;

/** {@code k8s.io/CloneRequest} is {@code <claim>} or {@code <namespace>/<claim>}, valid names. */
final class CloneRequestSyntaxRule implements ClaimRule {

  /** The rule's name in denials, warnings and metrics. */
  static final String NAME = "clone-request-syntax";

  @Override
  public boolean readsRequestOnly() {
    return true;
  }

  @Override
  public void check(ClaimReview r, Findings f) {
    if (!r.isUpdate() && r.syntaxError() != null) {
      f.deny(NAME, r.syntaxError());
    }
  }
}
