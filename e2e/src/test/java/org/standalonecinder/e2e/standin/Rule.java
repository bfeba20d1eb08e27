package org.standalonecinder.e2e.standin;

/**
 * The rules of the snapshot-controller stand-in, each one thing external-snapshotter v4.2.1's
 * common controller ({@code pkg/common-controller}) does for a snapshot of a volume that is not
 * CSI, named by the function of that release whose behaviour it follows. One can be switched off
 * for a run ({@code -Dstandin.rules.off=NAME,...}) to see which e2e row needs it.
 */
public enum Rule {
  /**
   * A named class must exist, else the snapshot's error says so (GetSnapshotClassFailed); a
   * snapshot of a claim that names no class gets no default one for a volume that is not CSI
   * (SetDefaultSnapshotClassFailed). {@code checkAndUpdateSnapshotClass}, {@code
   * SetDefaultSnapshotClass}.
   */
  CLASS_LOOKUP,
  /**
   * Exactly one of claim and content as the source (SnapshotValidationError). {@code syncSnapshot}.
   */
  SOURCE_VALIDATION,
  /**
   * The source claim carries {@code snapshot.storage.kubernetes.io/pvc-as-source-protection} from
   * the first attempt to make a content until no snapshot of it is still unready. {@code
   * ensurePVCFinalizer}, {@code checkandRemovePVCFinalizer}, {@code isPVCBeingUsed}.
   */
  CLAIM_FINALIZER,
  /** Every snapshot not being deleted gets {@code volumesnapshot-as-source-protection}. */
  SOURCE_FINALIZER,
  /**
   * A snapshot bound to a content of {@code deletionPolicy: Delete} gets {@code
   * volumesnapshot-bound-protection}. {@code checkandAddSnapshotFinalizers}.
   */
  BOUND_FINALIZER,
  /**
   * A dynamic snapshot with no content gets none made for a PV without {@code spec.csi}: its error
   * and a SnapshotContentCreationFailed event say "cannot find CSI PersistentVolumeSource". {@code
   * createSnapshotContent}.
   */
  NO_CONTENT_FOR_NON_CSI,
  /**
   * A dynamic snapshot binds {@code snapcontent-<its uid>} when that content's {@code
   * volumeSnapshotRef} names it (namespace, name and uid) and it has a {@code volumeHandle}; any
   * other such content is an error (misbound, or pre-provisioned). The driver is not compared (the
   * real one does not). {@code getDynamicallyProvisionedContentFromStore}.
   */
  BIND_DYNAMIC,
  /**
   * A pre-provisioned snapshot binds the content it names only when that content has a {@code
   * snapshotHandle} and its {@code volumeSnapshotRef} names it (an empty uid is filled in, and the
   * class). {@code getPreprovisionedContentFromStore}, {@code checkandBindSnapshotContent}.
   */
  BIND_PRE_PROVISIONED,
  /**
   * A bound snapshot's {@code boundVolumeSnapshotContentName}, {@code readyToUse}, {@code
   * creationTime}, {@code restoreSize} and {@code error} follow its content's status, with the
   * SnapshotCreated and SnapshotReady events. {@code updateSnapshotStatus}.
   */
  STATUS_FOLLOWS_CONTENT,
  /**
   * A ready snapshot whose content is gone, or no longer names it, says so in its error. {@code
   * syncReadySnapshot}.
   */
  READY_CHECK,
  /**
   * A bound content (its ref has a uid) not being deleted gets {@code
   * volumesnapshotcontent-bound-protection}. {@code syncContent}.
   */
  CONTENT_FINALIZER,
  /**
   * A snapshot being deleted marks its content {@code volumesnapshot-being-deleted}, deletes it
   * under {@code Delete} (keeping its bound finalizer until the content is gone) and keeps it under
   * {@code Retain}; then its finalizers go. {@code processSnapshotWithDeletionTimestamp}, {@code
   * checkandRemoveSnapshotFinalizersAndCheckandDeleteContent}.
   */
  DELETION,
  /**
   * A snapshot is not let go while a Pending claim of its namespace names it as its data source
   * (SnapshotDeletePending). {@code isVolumeBeingCreatedFromSnapshot}.
   */
  RESTORE_PROTECTION;

  /** The rules named in {@code value} (comma-separated; empty: none). */
  public static java.util.Set<Rule> parse(String value) {
    java.util.Set<Rule> rules = java.util.EnumSet.noneOf(Rule.class);
    if (value != null) {
      for (String name : value.split(",")) {
        if (!name.isBlank()) {
          rules.add(Rule.valueOf(name.strip()));
        }
      }
    }
    return rules;
  }
}
