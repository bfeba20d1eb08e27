package org.standalonecinder.webhook.policy;

/**
 * A data source our volumes can be filled from must be well-formed, and a VolumeSnapshot one of the
 * claim's own namespace: anything else would leave the claim unprovisioned with the reason only in
 * an event. A claim (a clone) and a snapshot (a restore) are the provisioner's to fill; any other
 * kind is its populator's, and the provisioner leaves the claim alone.
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
