package org.standalonecinder.webhook.policy;

/** An unbound source has no volume to clone yet. */
final class SourceUnboundRule implements ClaimRule {

  /** The rule's name in denials, warnings and metrics. */
  static final String NAME = "clone-source-unbound";

  @Override
  public void check(ClaimReview r, Findings f) {
    if (r.isUpdate()) {
      return;
    }
    r.visibleSourceClaim()
        .filter(s -> s.getStatus() == null || !"Bound".equals(s.getStatus().getPhase()))
        .ifPresent(s -> f.deny(NAME, "source claim " + r.source() + " is not Bound yet"));
  }
}
