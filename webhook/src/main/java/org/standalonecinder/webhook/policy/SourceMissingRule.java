package org.standalonecinder.webhook.policy;

/** The source claim exists (said only to a requester who may see the source's namespace). */
final class SourceMissingRule implements ClaimRule {

  /** The rule's name in denials, warnings and metrics. */
  static final String NAME = "clone-source-missing";

  @Override
  public void check(ClaimReview r, Findings f) {
    if (!r.isUpdate()
        && r.looksAtSource()
        && r.source() != null
        && r.crossNamespaceAllowed()
        && r.sourceClaim().isEmpty()) {
      f.deny(NAME, "source claim " + r.source() + " does not exist");
    }
  }
}
