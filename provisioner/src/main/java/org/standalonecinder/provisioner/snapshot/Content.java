package org.standalonecinder.provisioner.snapshot;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What this provisioner reads of a {@code VolumeSnapshotContent}. Read from the object's JSON
 * rather than a model class, so that a write never drops a field a newer CRD has.
 *
 * @param name the content's name
 * @param resourceVersion what a write is conditional on
 * @param deleting whether its deletion has begun
 * @param finalizers its finalizers
 * @param annotated whether it has any annotation
 * @param beingCreated whether the being-created annotation is set
 * @param beingDeleted whether the snapshot-controller marked it to be deleted
 * @param driver {@code spec.driver}
 * @param deletionPolicy {@code Delete} or {@code Retain}
 * @param volumeHandle the volume to snapshot (a dynamic snapshot), or null
 * @param snapshotHandle the existing snapshot (a pre-provisioned one), or null
 * @param className its VolumeSnapshotClass, or null
 * @param snapshotNamespace the namespace of the VolumeSnapshot it is for
 * @param snapshotName that VolumeSnapshot's name
 * @param snapshotUid that VolumeSnapshot's uid, empty while a pre-provisioned content is unbound
 * @param sourceVolumeMode the volume mode of what it was taken of ({@code spec.sourceVolumeMode},
 *     else this provisioner's annotation), or null when it does not say (a pre-provisioned one)
 * @param status what {@code status} says, or null when it has none
 */
public record Content(
    String name,
    String resourceVersion,
    boolean deleting,
    List<String> finalizers,
    boolean annotated,
    boolean beingCreated,
    boolean beingDeleted,
    String driver,
    String deletionPolicy,
    String volumeHandle,
    String snapshotHandle,
    String className,
    String snapshotNamespace,
    String snapshotName,
    String snapshotUid,
    String sourceVolumeMode,
    Status status) {

  /**
   * A content's {@code status}.
   *
   * @param snapshotHandle the storage snapshot's id, or null
   * @param readyToUse whether it can be restored from
   * @param error the last error's message, or null
   */
  public record Status(String snapshotHandle, boolean readyToUse, String error) {}

  /** The view of {@code r}. */
  public static Content of(GenericKubernetesResource r) {
    var m = r.getMetadata();
    Map<String, Object> spec = Json.map(r.getAdditionalProperties().get("spec"));
    Map<String, Object> source = Json.map(spec.get("source"));
    Map<String, Object> ref = Json.map(spec.get("volumeSnapshotRef"));
    Object rawStatus = r.getAdditionalProperties().get("status");
    Status status = null;
    if (rawStatus instanceof Map<?, ?>) {
      Map<String, Object> s = Json.map(rawStatus);
      status =
          new Status(
              Json.string(s.get("snapshotHandle")),
              Boolean.TRUE.equals(s.get("readyToUse")),
              Json.string(Json.map(s.get("error")).get("message")));
    }
    Map<String, String> annotations = m.getAnnotations() == null ? Map.of() : m.getAnnotations();
    return new Content(
        m.getName(),
        m.getResourceVersion(),
        m.getDeletionTimestamp() != null,
        m.getFinalizers() == null ? List.of() : List.copyOf(m.getFinalizers()),
        m.getAnnotations() != null,
        annotations.get(SnapshotApi.BEING_CREATED) != null,
        annotations.get(SnapshotApi.BEING_DELETED) != null,
        Json.string(spec.get("driver")),
        Json.string(spec.get("deletionPolicy")),
        Json.string(source.get("volumeHandle")),
        Json.string(source.get("snapshotHandle")),
        Json.string(spec.get("volumeSnapshotClassName")),
        Json.string(ref.get("namespace")),
        Json.string(ref.get("name")),
        Json.string(ref.get("uid")),
        Optional.ofNullable(Json.string(spec.get("sourceVolumeMode")))
            .orElse(annotations.get(SnapshotApi.SOURCE_VOLUME_MODE)),
        status);
  }

  /** Whether it asks for a new snapshot of a volume (rather than naming one that exists). */
  public boolean dynamic() {
    return volumeHandle != null;
  }

  /** The storage snapshot it stands for, once known: the status', else the spec's. */
  public String handle() {
    if (status != null && status.snapshotHandle() != null) {
      return status.snapshotHandle();
    }
    return snapshotHandle;
  }

  /**
   * Whether its storage snapshot is to be dealt with for its deletion now, as the CSI sidecar
   * decides: never while one is being taken; when the snapshot-controller marked it; and a
   * pre-provisioned content that never bound.
   */
  public boolean toDelete() {
    if (!deleting) {
      return false;
    }
    if (snapshotHandle != null && (snapshotUid == null || snapshotUid.isEmpty())) {
      return true;
    }
    return !beingCreated && beingDeleted;
  }

  /**
   * Whether its next step asks Cinder (and so runs off the loop's workers): it is being taken, read
   * or deleted. A ready content's step at most writes the content itself.
   */
  public boolean asksCinder() {
    return toDelete() || status == null || !status.readyToUse();
  }
}
