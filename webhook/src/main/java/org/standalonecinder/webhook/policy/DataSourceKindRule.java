package org.standalonecinder.webhook.policy;

/**
 * Only a claim can fill one of our volumes: a VolumeSnapshot or a populator would be ignored, and
 * the user would get a blank volume where they expect data.
 */
final class DataSourceKindRule implements ClaimRule {

  /** The rule's name in denials, warnings and metrics. */
  static final String NAME = "clone-data-source-kind";

  @Override
  public void check(ClaimReview r, Findings f) {
    if (r.isUpdate()) {
      return;
    }
    String error = r.dataSourceError();
    if (error != null) {
      f.deny(
          NAME,
          "StorageClass "
              + r.className()
              + ": "
              + error
              + "; remove the data source or use another class");
    }
  }
}
