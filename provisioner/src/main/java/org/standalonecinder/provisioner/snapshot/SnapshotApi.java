package org.standalonecinder.provisioner.snapshot;

import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;

/**
 * The names of Kubernetes' snapshot API ({@code snapshot.storage.k8s.io/v1}, served by the CRDs of
 * kubernetes-csi/external-snapshotter and driven by its snapshot-controller) that this provisioner
 * meets in the part a CSI driver's snapshotter sidecar plays.
 */
public final class SnapshotApi {

  public static final String GROUP = "snapshot.storage.k8s.io";
  public static final String VERSION = "v1";
  public static final String API_VERSION = GROUP + "/" + VERSION;

  public static final ResourceDefinitionContext SNAPSHOTS =
      new ResourceDefinitionContext.Builder()
          .withGroup(GROUP)
          .withVersion(VERSION)
          .withKind("VolumeSnapshot")
          .withPlural("volumesnapshots")
          .withNamespaced(true)
          .build();

  public static final ResourceDefinitionContext CONTENTS =
      new ResourceDefinitionContext.Builder()
          .withGroup(GROUP)
          .withVersion(VERSION)
          .withKind("VolumeSnapshotContent")
          .withPlural("volumesnapshotcontents")
          .withNamespaced(false)
          .build();

  public static final ResourceDefinitionContext CLASSES =
      new ResourceDefinitionContext.Builder()
          .withGroup(GROUP)
          .withVersion(VERSION)
          .withKind("VolumeSnapshotClass")
          .withPlural("volumesnapshotclasses")
          .withNamespaced(false)
          .build();

  /**
   * The finalizer the snapshot-controller puts on a content; whoever deletes the storage snapshot
   * removes it (a CSI driver's sidecar, here this provisioner).
   */
  public static final String CONTENT_FINALIZER =
      "snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection";

  /**
   * Set on a content while its storage snapshot is being taken: the snapshot-controller does not
   * delete a content that has it, so a snapshot whose taking is in flight is never lost track of.
   */
  public static final String BEING_CREATED =
      "snapshot.storage.kubernetes.io/volumesnapshot-being-created";

  /** Set by the snapshot-controller when a content is to go with its storage snapshot. */
  public static final String BEING_DELETED =
      "snapshot.storage.kubernetes.io/volumesnapshot-being-deleted";

  /**
   * The volume mode of the claim a dynamic content was made for, kept by this provisioner as an
   * annotation: {@code spec.sourceVolumeMode} says the same only where the CRDs are of
   * external-snapshotter 6 or later (older ones drop the field).
   */
  public static final String SOURCE_VOLUME_MODE = "standalone-cinder.io/source-volume-mode";

  /** Set by an admin on a content whose snapshot may be restored into another volume mode. */
  public static final String ALLOW_MODE_CHANGE =
      "snapshot.storage.kubernetes.io/allow-volume-mode-change";

  /** The name the snapshot-controller looks for as the content of a dynamic snapshot. */
  public static String contentName(String snapshotUid) {
    return "snapcontent-" + snapshotUid;
  }

  public static final String DELETE = "Delete";
  public static final String RETAIN = "Retain";

  // What a Cinder snapshot made for a content carries in its metadata.
  /** The content it was taken for (also its name in Cinder). */
  public static final String META_CONTENT = "standalone-cinder.io/snapshot-content";

  /** The VolumeSnapshot it was taken for, {@code namespace/name}. */
  public static final String META_SNAPSHOT = "standalone-cinder.io/volume-snapshot";

  /**
   * The content's deletion policy as last seen: the restart sweep deletes a snapshot whose content
   * is gone only when it says {@link #DELETE}.
   */
  public static final String META_POLICY = "standalone-cinder.io/deletion-policy";

  /**
   * The volume mode of the claim it was taken of: a content an admin makes for it later (which says
   * no mode) is restored into that mode only.
   */
  public static final String META_SOURCE_MODE = "standalone-cinder.io/source-volume-mode";

  private SnapshotApi() {}
}
