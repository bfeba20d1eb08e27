package org.standalonecinder.webhook.policy;

/** A Block source cannot become a filesystem clone, nor the other way round. */
final class VolumeModeRule implements ClaimRule {

  /** The rule's name in denials, warnings and metrics. */
  static final String NAME = "clone-volume-mode";

  @Override
  public void check(ClaimReview r, Findings f) {
    if (r.isUpdate()) {
      return;
    }
    r.visibleSourceClaim()
        .ifPresent(
            source -> {
              String sourceMode = ClaimReview.mode(source);
              String targetMode = r.claim.mode();
              if (!sourceMode.equals(targetMode)) {
                f.deny(
                    NAME,
                    "source claim "
                        + r.source()
                        + " has volumeMode "
                        + sourceMode
                        + " and this claim "
                        + targetMode
                        + "; they must match");
              }
            });
  }
}
