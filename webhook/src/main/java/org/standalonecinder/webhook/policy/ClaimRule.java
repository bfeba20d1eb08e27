package org.standalonecinder.webhook.policy;

/**
 * One rule about claims: it looks at a {@link ClaimReview} and adds what it finds (a violation, a
 * warning, a patch) to the {@link Findings}. {@link ClonePolicy} runs every rule in order; a rule
 * that must only act when the rules before it found nothing asks {@link Findings#clean()}.
 */
interface ClaimRule {

  void check(ClaimReview review, Findings findings);

  /**
   * Whether the rule reads only the request. Such rules run first, before anything is looked up, so
   * that their violations are reported even when the API server cannot be reached: the user fixes a
   * typo, not the network. A rule that answers true must not call a lookup of {@link ClaimReview}.
   */
  default boolean readsRequestOnly() {
    return false;
  }
}
