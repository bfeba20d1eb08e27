package org.standalonecinder.e2e.standin;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.util.List;
import java.util.Map;

/**
 * What the stand-in reads of a VolumeSnapshotContent.
 *
 * @param status its status as written, or null
 * @param driver {@code spec.driver}, which binding does not compare (nor does the real one's)
 */
record SnapContent(
    String name,
    String resourceVersion,
    boolean deleting,
    List<String> finalizers,
    Map<String, String> annotations,
    String deletionPolicy,
    String volumeHandle,
    String snapshotHandle,
    String refNamespace,
    String refName,
    String refUid,
    String className,
    Map<String, Object> status,
    String driver) {

  static SnapContent of(GenericKubernetesResource r) {
    var m = r.getMetadata();
    Map<String, Object> spec = Maps.map(r.getAdditionalProperties().get("spec"));
    Map<String, Object> source = Maps.map(spec.get("source"));
    Map<String, Object> ref = Maps.map(spec.get("volumeSnapshotRef"));
    Object status = r.getAdditionalProperties().get("status");
    return new SnapContent(
        m.getName(),
        m.getResourceVersion(),
        m.getDeletionTimestamp() != null,
        m.getFinalizers() == null ? List.of() : List.copyOf(m.getFinalizers()),
        m.getAnnotations() == null ? Map.of() : Map.copyOf(m.getAnnotations()),
        Maps.string(spec.get("deletionPolicy")),
        Maps.string(source.get("volumeHandle")),
        Maps.string(source.get("snapshotHandle")),
        Maps.string(ref.get("namespace")),
        Maps.string(ref.get("name")),
        Maps.string(ref.get("uid")),
        Maps.string(spec.get("volumeSnapshotClassName")),
        status == null ? null : Maps.map(status),
        Maps.string(spec.get("driver")));
  }

  /** {@code SnapshotRefKey}: the snapshot its ref names, {@code namespace/name}. */
  String refKey() {
    return (refNamespace == null ? "" : refNamespace) + "/" + (refName == null ? "" : refName);
  }

  /** {@code IsVolumeSnapshotRefSet}: its ref names exactly this snapshot. */
  boolean names(Snap s) {
    return s.name().equals(refName)
        && s.namespace().equals(refNamespace)
        && s.uid().equals(refUid == null ? "" : refUid);
  }

  boolean bound() {
    return refUid != null && !refUid.isEmpty();
  }
}
