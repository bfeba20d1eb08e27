package org.standalonecinder.webhook.policy;

/**
 * Access modes our volumes can serve: a filesystem mounted read-write on several nodes at once is
 * corrupted, so ReadWriteMany needs volumeMode Block. Any claim of our classes, not only clones.
 */
final class SharedFilesystemRule implements ClaimRule {

  /** The rule's name in denials, warnings and metrics. */
  static final String NAME = "shared-filesystem";

  @Override
  public void check(ClaimReview r, Findings f) {
    if (!r.isUpdate() && r.ourClass()) {
      r.sharedFilesystem().ifPresent(reason -> f.deny(NAME, reason));
    }
  }
}
