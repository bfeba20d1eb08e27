package org.standalonecinder.webhook.policy;

import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.api.ClaimRef;

/** The annotation and {@code spec.dataSource} must not name two different sources. */
final class TwoSourcesRule implements ClaimRule {

  /** The rule's name in denials, warnings and metrics. */
  static final String NAME = "clone-two-sources";

  @Override
  public void check(ClaimReview r, Findings f) {
    if (r.isUpdate()) {
      return;
    }
    ClaimRef annotated = r.annotatedSource();
    if (annotated != null && r.ourClass() && r.otherDataSource() != null) {
      f.deny(
          NAME,
          ClaimAnnotations.CLONE_REQUEST
              + " names "
              + annotated
              + " but spec.dataSource names "
              + r.otherDataSource()
              + "; name one source");
      return;
    }
    ClaimRef nativeSource = annotated == null ? null : r.nativeSource();
    if (nativeSource == null) {
      return;
    }
    if (annotated.equals(nativeSource)) {
      f.warn(
          NAME, ClaimAnnotations.CLONE_REQUEST + " repeats spec.dataSource; one of them is enough");
    } else {
      f.deny(
          NAME,
          ClaimAnnotations.CLONE_REQUEST
              + " names "
              + annotated
              + " but spec.dataSource names "
              + nativeSource
              + "; name one source");
    }
  }
}
