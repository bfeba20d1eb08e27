package org.standalonecinder.webhook.policy;

/** A source being deleted may lose its volume while the clone is made. */
final class SourceDeletingRule implements ClaimRule {

  /** The rule's name in denials, warnings and metrics. */
  static final String NAME = "clone-source-deleting";

  @Override
  public void check(ClaimReview r, Findings f) {
    if (r.isUpdate()) {
      return;
    }
    r.visibleSourceClaim()
        .filter(s -> s.getMetadata().getDeletionTimestamp() != null)
        .ifPresent(s -> f.deny(NAME, "source claim " + r.source() + " is being deleted"));
  }
}
