package org.standalonecinder.provisioner.snapshot;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.util.Map;

/**
 * What this provisioner reads of a {@code VolumeSnapshot}.
 *
 * @param namespace its namespace
 * @param name its name
 * @param uid its uid (the dynamic content's name comes from it)
 * @param resourceVersion its version, named in the content's reference
 * @param deleting whether its deletion has begun
 * @param className {@code spec.volumeSnapshotClassName}, or null
 * @param claimName the claim to snapshot ({@code spec.source.persistentVolumeClaimName}), or null
 * @param contentName the pre-provisioned content it binds to, or null
 * @param boundContentName {@code status.boundVolumeSnapshotContentName}, or null
 * @param created its creation timestamp (RFC 3339), or null
 */
public record VolumeSnapshot(
    String namespace,
    String name,
    String uid,
    String resourceVersion,
    boolean deleting,
    String className,
    String claimName,
    String contentName,
    String boundContentName,
    String created) {

  /** The view of {@code r}. */
  public static VolumeSnapshot of(GenericKubernetesResource r) {
    var m = r.getMetadata();
    Map<String, Object> spec = Json.map(r.getAdditionalProperties().get("spec"));
    Map<String, Object> source = Json.map(spec.get("source"));
    Map<String, Object> status = Json.map(r.getAdditionalProperties().get("status"));
    return new VolumeSnapshot(
        m.getNamespace(),
        m.getName(),
        m.getUid(),
        m.getResourceVersion(),
        m.getDeletionTimestamp() != null,
        Json.string(spec.get("volumeSnapshotClassName")),
        Json.string(source.get("persistentVolumeClaimName")),
        Json.string(source.get("volumeSnapshotContentName")),
        Json.string(status.get("boundVolumeSnapshotContentName")),
        m.getCreationTimestamp());
  }

  /** {@code namespace/name}. */
  public String key() {
    return namespace + "/" + name;
  }
}
