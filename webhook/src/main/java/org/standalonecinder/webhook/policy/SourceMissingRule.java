package org.standalonecinder.webhook.policy;

/** The source claim exists (said only to a requester who may see the source's namespace). */
final class SourceMissingRule implements ClaimRule {

  @Override
  public void check(ClaimReview r, Findings f) {
    if (!r.isUpdate()
        && r.source() != null
        && r.crossNamespaceAllowed()
        && r.sourceClaim().isEmpty()) {
      f.deny(ClonePolicy.RULE_SOURCE_MISSING, "source claim " + r.source() + " does not exist");
    }
  }
}
