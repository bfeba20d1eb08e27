package org.standalonecinder.e2e.standin;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * What the stand-in does when it looks at a VolumeSnapshot: external-snapshotter v4.2.1's {@code
 * syncSnapshotByKey} and {@code syncSnapshot} for snapshots of volumes that are not CSI, in the
 * same order and with the same messages. Pure: the steps are returned, not taken.
 */
final class SnapshotRules {

  private final World world;
  private final Set<Rule> on;
  private final Snap s;
  private final List<Step> steps = new ArrayList<>();

  private SnapshotRules(World world, Set<Rule> on, Snap s) {
    this.world = world;
    this.on = on;
    this.s = s;
  }

  /** The steps for snapshot {@code s} (as the API server has it now). */
  static List<Step> sync(Snap s, World world, Set<Rule> on) {
    SnapshotRules r = new SnapshotRules(world, on, s);
    r.sync();
    return List.copyOf(r.steps);
  }

  private void sync() {
    if (on.contains(Rule.CLASS_LOOKUP) && !classFound()) {
      return;
    }
    if (on.contains(Rule.CLAIM_FINALIZER)) {
      releaseClaim(false);
    }
    if (s.deleting()) {
      if (on.contains(Rule.DELETION)) {
        deletion();
      }
      return;
    }
    if (on.contains(Rule.SOURCE_VALIDATION)
        && (s.claimName() == null) == (s.contentName() == null)) {
      String why =
          "Exactly one of PersistentVolumeClaimName and VolumeSnapshotContentName should be specified";
      error(true, "SnapshotValidationError", why);
      retry(why);
      return;
    }
    SnapContent content;
    try {
      content = s.contentName() != null ? preProvisionedContent() : dynamicContent();
    } catch (Refused e) {
      event("Warning", "SnapshotFinalizerError", "Failed to check and update snapshot: " + e.why);
      retry(e.why);
      return;
    }
    addFinalizers(content);
    if (!s.ready() || s.boundContentName() == null) {
      unready(content);
    } else if (on.contains(Rule.READY_CHECK)) {
      readyCheck();
    }
  }

  /** {@code checkAndUpdateSnapshotClass}: whether to go on. */
  private boolean classFound() {
    if (s.className() != null) {
      if (world.classExists(s.className())) {
        return true;
      }
      error(
          false,
          "GetSnapshotClassFailed",
          "Failed to get snapshot class with error " + classNotFound());
      // A snapshot being deleted is let go all the same.
      if (!s.deleting()) {
        retry("no class " + s.className());
      }
      return s.deleting();
    }
    if (s.contentName() != null) {
      return true;
    }
    String why;
    try {
      PersistentVolume pv = volume();
      why =
          pv.getSpec().getCsi() == null
              ? "snapshotting non-CSI volumes is not supported, snapshot:" + s.key()
              : beyondTheStandIn(pv);
    } catch (Refused e) {
      why = e.why;
    }
    error(
        false,
        "SetDefaultSnapshotClassFailed",
        "Failed to set default snapshot class with error " + why);
    retry(why);
    return false;
  }

  private String classNotFound() {
    return "volumesnapshotclass.snapshot.storage.k8s.io "
        + Names.quoted(s.className())
        + " not found";
  }

  /** {@code checkandAddSnapshotFinalizers}. */
  private void addFinalizers(SnapContent content) {
    List<String> add = new ArrayList<>();
    if (on.contains(Rule.SOURCE_FINALIZER) && !s.has(Names.AS_SOURCE)) {
      add.add(Names.AS_SOURCE);
    }
    if (on.contains(Rule.BOUND_FINALIZER)
        && content != null
        && !s.has(Names.BOUND)
        && s.boundContentName() != null
        && Names.DELETE.equals(content.deletionPolicy())) {
      add.add(Names.BOUND);
    }
    if (!add.isEmpty()) {
      List<String> all = new ArrayList<>(s.finalizers());
      all.addAll(add);
      steps.add(new Step.Finalizers(Step.Target.snapshot(s), s.resourceVersion(), all, "+" + add));
    }
  }

  /** {@code syncUnreadySnapshot}, after the content was looked up. */
  private void unready(SnapContent content) {
    if (s.contentName() != null) {
      if (on.contains(Rule.BIND_PRE_PROVISIONED)) {
        bindPreProvisioned(content);
      }
      return;
    }
    if (content != null) {
      if (!on.contains(Rule.BIND_DYNAMIC)) {
        return;
      }
      if (content.snapshotHandle() != null) {
        error(
            true,
            "SnapshotHandleSet",
            "Snapshot handle should not be set in content "
                + s.key()
                + " for dynamic provisioning");
        retry(
            "snapshotHandle should not be set in the content for dynamic provisioning for snapshot "
                + s.key());
        return;
      }
      follow(content);
      return;
    }
    if (!on.contains(Rule.NO_CONTENT_FOR_NON_CSI)) {
      return;
    }
    String why;
    try {
      why = whyNoContent();
    } catch (Refused e) {
      why = e.why;
    }
    error(
        true,
        "SnapshotContentCreationFailed",
        "Failed to create snapshot content with error " + why);
    retry(why);
  }

  /** {@code createSnapshotContent}, up to where it gives up for a volume that is not CSI. */
  private String whyNoContent() {
    if (on.contains(Rule.CLAIM_FINALIZER)) {
      protectClaim();
    }
    String input = "failed to get input parameters to create snapshot " + s.name() + ": ";
    if (s.className() == null) {
      return input
          + Names.quoted("failed to take snapshot " + s.name() + " without a snapshot class");
    }
    if (!world.classExists(s.className())) {
      return input + Names.quoted(classNotFound());
    }
    PersistentVolume pv;
    try {
      pv = volume();
    } catch (Refused e) {
      return input + Names.quoted(e.why);
    }
    if (pv.getSpec().getCsi() == null) {
      return "cannot find CSI PersistentVolumeSource for volume " + pv.getMetadata().getName();
    }
    return beyondTheStandIn(pv);
  }

  /** What the real one would do for a CSI volume (make a content) the stand-in does not. */
  private static String beyondTheStandIn(PersistentVolume pv) {
    return "the e2e snapshot-controller stand-in makes no content for a CSI volume ("
        + pv.getMetadata().getName()
        + "): it plays the real one only for volumes that are not CSI";
  }

  /** {@code ensurePVCFinalizer}. */
  private void protectClaim() {
    PersistentVolumeClaim claim = world.claim(s.namespace(), s.claimName());
    if (claim == null) {
      throw new Refused(
          Names.UPDATE_FAILED + " " + s.name() + " on API server: cannot get claim from snapshot");
    }
    List<String> finalizers = finalizers(claim);
    if (finalizers.contains(Names.CLAIM_FINALIZER)) {
      return;
    }
    if (claim.getMetadata().getDeletionTimestamp() != null) {
      throw new Refused(
          Names.UPDATE_FAILED
              + " "
              + claim.getMetadata().getName()
              + " on API server: cannot add finalizer on claim because it is being deleted");
    }
    List<String> all = new ArrayList<>(finalizers);
    all.add(Names.CLAIM_FINALIZER);
    steps.add(
        new Step.Finalizers(
            Step.Target.claim(s.namespace(), s.claimName()),
            claim.getMetadata().getResourceVersion(),
            all,
            "+[" + Names.CLAIM_FINALIZER + "]"));
  }

  /**
   * {@code checkandRemovePVCFinalizer}: the claim's finalizer goes once no snapshot of it is
   * unready.
   */
  private void releaseClaim(boolean skipThisOne) {
    if (s.claimName() == null || s.claimName().isEmpty()) {
      return;
    }
    PersistentVolumeClaim claim = world.claim(s.namespace(), s.claimName());
    if (claim == null || !finalizers(claim).contains(Names.CLAIM_FINALIZER)) {
      return;
    }
    for (Snap other : world.snapshotsIn(s.namespace())) {
      if (skipThisOne && other.name().equals(s.name())) {
        continue;
      }
      if (claim.getMetadata().getName().equals(other.claimName()) && !other.ready()) {
        return;
      }
    }
    List<String> rest = new ArrayList<>(finalizers(claim));
    rest.remove(Names.CLAIM_FINALIZER);
    Step release =
        new Step.Finalizers(
            Step.Target.claim(s.namespace(), s.claimName()),
            claim.getMetadata().getResourceVersion(),
            rest,
            "-[" + Names.CLAIM_FINALIZER + "]");
    // At the top of a sync the real one tells a failed removal (ErrorPVCFinalizer) and goes on.
    steps.add(
        skipThisOne
            ? release
            : new Step.Tolerant(
                release,
                new Step.Event(
                    Step.Target.snapshot(s),
                    s.uid(),
                    "Warning",
                    "ErrorPVCFinalizer",
                    "Error check and remove PVC Finalizer for VolumeSnapshot")));
  }

  /** {@code getVolumeFromVolumeSnapshot}. */
  private PersistentVolume volume() {
    if (s.claimName().isEmpty()) {
      throw new Refused("the PVC name is not specified in snapshot " + s.key());
    }
    PersistentVolumeClaim claim = world.claim(s.namespace(), s.claimName());
    if (claim == null) {
      throw new Refused(
          "failed to retrieve PVC "
              + s.claimName()
              + " from the lister: "
              + Names.quoted(
                  "persistentvolumeclaim " + Names.quoted(s.claimName()) + " not found"));
    }
    if (claim.getStatus() == null || !"Bound".equals(claim.getStatus().getPhase())) {
      throw new Refused(
          "the PVC "
              + s.claimName()
              + " is not yet bound to a PV, will not attempt to take a snapshot");
    }
    String pvName = claim.getSpec().getVolumeName();
    PersistentVolume pv = pvName == null || pvName.isEmpty() ? null : world.volume(pvName);
    if (pv == null) {
      throw new Refused(
          "failed to retrieve PV "
              + pvName
              + " from the API server: "
              + Names.quoted(
                  "persistentvolumes " + Names.quoted(String.valueOf(pvName)) + " not found"));
    }
    var ref = pv.getSpec().getClaimRef();
    boolean bound =
        ref != null
            && s.claimName().equals(ref.getName())
            && s.namespace().equals(ref.getNamespace())
            && (ref.getUid() == null
                || ref.getUid().isEmpty()
                || ref.getUid().equals(claim.getMetadata().getUid()));
    if (!bound) {
      throw new Refused("claim in dataSource not bound or invalid");
    }
    return pv;
  }

  /** {@code getDynamicallyProvisionedContentFromStore}: the content, null, or refused. */
  private SnapContent dynamicContent() {
    String name = Names.contentName(s.uid());
    SnapContent c = world.content(name);
    if (c == null || !on.contains(Rule.BIND_DYNAMIC)) {
      return c;
    }
    if (c.volumeHandle() == null) {
      error(
          true,
          "SnapshotContentMismatch",
          "VolumeSnapshotContent "
              + name
              + " is pre-provisioned while expecting a dynamically provisioned one");
      throw new Refused(
          "snapshot "
              + s.key()
              + " expects a dynamically provisioned VolumeSnapshotContent "
              + name
              + " but gets a pre-provisioned one");
    }
    if (!c.names(s)) {
      String msg = "VolumeSnapshotContent [" + name + "] is bound to a different snapshot";
      error(true, "SnapshotContentMisbound", msg);
      throw new Refused(msg);
    }
    return c;
  }

  /** {@code getPreprovisionedContentFromStore}. */
  private SnapContent preProvisionedContent() {
    String name = s.contentName();
    if (name.isEmpty()) {
      throw new Refused("empty VolumeSnapshotContentName for snapshot " + s.key());
    }
    SnapContent c = world.content(name);
    if (c == null || !on.contains(Rule.BIND_PRE_PROVISIONED)) {
      return c;
    }
    if (c.snapshotHandle() == null) {
      error(
          true,
          "SnapshotContentMismatch",
          "VolumeSnapshotContent is dynamically provisioned while expecting a pre-provisioned one");
      throw new Refused(
          "snapshot "
              + s.key()
              + " expects a pre-provisioned VolumeSnapshotContent "
              + name
              + " but gets a dynamically provisioned one");
    }
    boolean uidOk = c.refUid() == null || c.refUid().isEmpty() || c.refUid().equals(s.uid());
    if (!s.name().equals(c.refName()) || !s.namespace().equals(c.refNamespace()) || !uidOk) {
      String msg = "VolumeSnapshotContent [" + name + "] is bound to a different snapshot";
      error(true, "SnapshotContentMisbound", msg);
      throw new Refused(msg);
    }
    return c;
  }

  /**
   * The pre-provisioned branch of {@code syncUnreadySnapshot}, with {@code
   * checkandBindSnapshotContent}.
   */
  private void bindPreProvisioned(SnapContent c) {
    if (c == null) {
      error(true, "SnapshotContentMissing", "VolumeSnapshotContent is missing");
      retry("snapshot " + s.key() + " requests an non-existing content " + s.contentName());
      return;
    }
    if (c.refUid() == null || c.refUid().isEmpty() || c.className() == null) {
      steps.add(new Step.BindContent(c, s.uid(), s.className()));
    }
    if (on.contains(Rule.STATUS_FOLLOWS_CONTENT)) {
      steps.add(new Step.FollowContent(s, c));
    }
  }

  private void follow(SnapContent content) {
    if (on.contains(Rule.STATUS_FOLLOWS_CONTENT)) {
      steps.add(new Step.FollowContent(s, content));
    }
  }

  /** {@code syncReadySnapshot}. */
  private void readyCheck() {
    SnapContent c = world.content(s.boundContentName());
    if (c == null) {
      error(true, "SnapshotContentMissing", "VolumeSnapshotContent is missing");
    } else if (!c.names(s)) {
      error(
          true,
          "SnapshotMisbound",
          "VolumeSnapshotContent is not bound to the VolumeSnapshot correctly");
    }
  }

  /** {@code processSnapshotWithDeletionTimestamp} and what it calls. */
  private void deletion() {
    String name = s.boundContentName();
    if (name == null && s.claimName() != null) {
      name = Names.contentName(s.uid());
    }
    SnapContent c = name == null ? null : world.content(name);
    if (c != null && !c.names(s)) {
      c = null;
    }
    boolean deleteContent = c != null && Names.DELETE.equals(c.deletionPolicy());
    if (!s.deletionCandidate()) {
      return;
    }
    if (c != null && on.contains(Rule.RESTORE_PROTECTION) && beingRestored()) {
      // The real one looks again only when the snapshot or its content changes, or at a resync.
      event("Warning", "SnapshotDeletePending", "Snapshot is being used to restore a PVC");
      return;
    }
    if (c != null && !c.annotations().containsKey(Names.BEING_DELETED)) {
      steps.add(new Step.Annotate(c, Names.BEING_DELETED, "yes"));
    }
    if (deleteContent) {
      steps.add(new Step.DeleteContent(c.name()));
    }
    if (on.contains(Rule.CLAIM_FINALIZER)) {
      releaseClaim(true);
    }
    List<String> rest = new ArrayList<>(s.finalizers());
    rest.remove(Names.AS_SOURCE);
    if (!deleteContent) {
      rest.remove(Names.BOUND);
    }
    if (!rest.equals(s.finalizers())) {
      List<String> gone = new ArrayList<>(s.finalizers());
      gone.removeAll(rest);
      steps.add(
          new Step.Finalizers(Step.Target.snapshot(s), s.resourceVersion(), rest, "-" + gone));
    }
  }

  /** {@code isVolumeBeingCreatedFromSnapshot}: a Pending claim of its namespace restores it. */
  private boolean beingRestored() {
    for (PersistentVolumeClaim claim : world.claimsIn(s.namespace())) {
      var source = claim.getSpec() == null ? null : claim.getSpec().getDataSource();
      if (source != null
          && s.name().equals(source.getName())
          && "VolumeSnapshot".equals(source.getKind())
          && Names.GROUP.equals(source.getApiGroup())
          && claim.getStatus() != null
          && "Pending".equals(claim.getStatus().getPhase())) {
        return true;
      }
    }
    return false;
  }

  /** {@code updateSnapshotErrorStatusWithEvent}: nothing when the same error is shown already. */
  private void error(boolean setReadyFalse, String reason, String message) {
    if (message.equals(s.errorMessage())) {
      return;
    }
    steps.add(new Step.SnapshotError(s, message, setReadyFalse));
    event("Warning", reason, message);
  }

  private void event(String type, String reason, String message) {
    steps.add(new Step.Event(Step.Target.snapshot(s), s.uid(), type, reason, message));
  }

  private void retry(String why) {
    steps.add(new Step.Retry(why));
  }

  private static List<String> finalizers(PersistentVolumeClaim claim) {
    var f = claim.getMetadata().getFinalizers();
    return f == null ? List.of() : f;
  }

  /** A look-up that ends the sync with the real one's error. */
  private static final class Refused extends RuntimeException {
    final String why;

    Refused(String why) {
      super(why, null, false, false);
      this.why = why;
    }
  }
}
