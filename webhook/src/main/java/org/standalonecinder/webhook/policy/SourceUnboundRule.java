package org.standalonecinder.webhook.policy;

/** An unbound source has no volume to clone yet. */
final class SourceUnboundRule implements ClaimRule {

  @Override
  public void check(ClaimReview r, Findings f) {
    if (r.isUpdate()) {
      return;
    }
    r.visibleSourceClaim()
        .filter(s -> s.getStatus() == null || !"Bound".equals(s.getStatus().getPhase()))
        .ifPresent(
            s ->
                f.deny(
                    ClonePolicy.RULE_SOURCE_UNBOUND,
                    "source claim " + r.source() + " is not Bound yet"));
  }
}
