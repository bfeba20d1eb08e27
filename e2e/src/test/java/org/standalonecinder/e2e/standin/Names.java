package org.standalonecinder.e2e.standin;

/** The snapshot API's names the stand-in writes (external-snapshotter's {@code pkg/utils}). */
final class Names {

  private Names() {}

  static final String GROUP = "snapshot.storage.k8s.io";
  static final String CONTENT_FINALIZER =
      "snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection";
  static final String BOUND = "snapshot.storage.kubernetes.io/volumesnapshot-bound-protection";
  static final String AS_SOURCE =
      "snapshot.storage.kubernetes.io/volumesnapshot-as-source-protection";
  static final String CLAIM_FINALIZER = "snapshot.storage.kubernetes.io/pvc-as-source-protection";
  static final String BEING_DELETED = "snapshot.storage.kubernetes.io/volumesnapshot-being-deleted";
  static final String DELETE = "Delete";

  /** {@code controllerUpdateFailMsg}, the prefix of the real one's write errors. */
  static final String UPDATE_FAILED = "snapshot controller failed to update";

  /** {@code GetDynamicSnapshotContentNameForSnapshot}. */
  static String contentName(String snapshotUid) {
    return "snapcontent-" + snapshotUid;
  }

  /** Go's {@code %q} of an error's text, as the real one's messages embed errors. */
  static String quoted(String s) {
    return '"' + s.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
  }
}
