package org.standalonecinder.webhook.policy;

/** {@code k8s.io/CloneRequest} is {@code <claim>} or {@code <namespace>/<claim>}, valid names. */
final class CloneRequestSyntaxRule implements ClaimRule {

  @Override
  public boolean readsRequestOnly() {
    return true;
  }

  @Override
  public void check(ClaimReview r, Findings f) {
    if (!r.isUpdate() && r.syntaxError() != null) {
      f.deny(ClonePolicy.RULE_SYNTAX, r.syntaxError());
    }
  }
}
