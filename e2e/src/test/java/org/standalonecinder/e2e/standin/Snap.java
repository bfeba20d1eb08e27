package org.standalonecinder.e2e.standin;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.util.List;
import java.util.Map;

/**
 * What the stand-in reads of a VolumeSnapshot.
 *
 * @param status its status as written, or null
 */
record Snap(
    String namespace,
    String name,
    String uid,
    String resourceVersion,
    boolean deleting,
    List<String> finalizers,
    String className,
    String claimName,
    String contentName,
    Map<String, Object> status) {

  static Snap of(GenericKubernetesResource r) {
    var m = r.getMetadata();
    Map<String, Object> spec = Maps.map(r.getAdditionalProperties().get("spec"));
    Map<String, Object> source = Maps.map(spec.get("source"));
    Object status = r.getAdditionalProperties().get("status");
    return new Snap(
        m.getNamespace(),
        m.getName(),
        m.getUid(),
        m.getResourceVersion(),
        m.getDeletionTimestamp() != null,
        m.getFinalizers() == null ? List.of() : List.copyOf(m.getFinalizers()),
        Maps.string(spec.get("volumeSnapshotClassName")),
        Maps.string(source.get("persistentVolumeClaimName")),
        Maps.string(source.get("volumeSnapshotContentName")),
        status == null ? null : Maps.map(status));
  }

  String key() {
    return namespace + "/" + name;
  }

  String boundContentName() {
    String b = status == null ? null : Maps.string(status.get("boundVolumeSnapshotContentName"));
    return b == null || b.isEmpty() ? null : b;
  }

  boolean ready() {
    return status != null && Boolean.TRUE.equals(status.get("readyToUse"));
  }

  String errorMessage() {
    return status == null ? null : Maps.string(Maps.map(status.get("error")).get("message"));
  }

  boolean has(String finalizer) {
    return finalizers.contains(finalizer);
  }

  /** {@code IsSnapshotDeletionCandidate}: being deleted and holding one of the two finalizers. */
  boolean deletionCandidate() {
    return deleting && (has(Names.AS_SOURCE) || has(Names.BOUND));
  }
}
