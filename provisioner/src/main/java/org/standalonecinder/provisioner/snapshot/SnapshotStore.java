package org.standalonecinder.provisioner.snapshot;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.util.LinkedHashMap;
import java.util.Map;
import org.standalonecinder.api.ClaimRef;

/**
 * The VolumeSnapshot informer's store: of each snapshot, any tenant's, it keeps only the metadata a
 * write or an event needs and the four names {@link VolumeSnapshot#of} reads, each bounded, never
 * its annotations, labels, managed fields or the rest of its spec and status (the tenant's to fill,
 * and VolumeSnapshots of claims that do not exist cost nothing to make), as the claims' store does.
 */
final class SnapshotStore extends BasicItemStore<GenericKubernetesResource> {

  /** A Kubernetes name's bound: a longer value names nothing, and is kept quoted. */
  static final int NAME = 253;

  SnapshotStore() {
    super(Cache::metaNamespaceKeyFunc);
  }

  @Override
  public GenericKubernetesResource put(String key, GenericKubernetesResource obj) {
    return super.put(key, trim(obj));
  }

  /**
   * The snapshot as kept: the object itself, trimmed in place (fabric8 hands the object put to the
   * index and the handlers: a copy would leave them the whole one).
   */
  static GenericKubernetesResource trim(GenericKubernetesResource r) {
    ObjectMeta m = r.getMetadata();
    if (m != null) {
      r.setMetadata(
          new ObjectMetaBuilder()
              .withName(m.getName())
              .withNamespace(m.getNamespace())
              .withUid(m.getUid())
              .withResourceVersion(m.getResourceVersion())
              .withCreationTimestamp(m.getCreationTimestamp())
              .withDeletionTimestamp(m.getDeletionTimestamp())
              .build());
    }
    Map<String, Object> spec = Json.map(r.getAdditionalProperties().get("spec"));
    Map<String, Object> source = Json.map(spec.get("source"));
    Object rawStatus = r.getAdditionalProperties().get("status");
    Map<String, Object> status = Json.map(rawStatus);
    Map<String, Object> keptSource = new LinkedHashMap<>();
    name(source, "persistentVolumeClaimName", keptSource);
    name(source, "volumeSnapshotContentName", keptSource);
    Map<String, Object> keptSpec = new LinkedHashMap<>();
    name(spec, "volumeSnapshotClassName", keptSpec);
    keptSpec.put("source", keptSource);
    Map<String, Object> props = new LinkedHashMap<>();
    props.put("spec", keptSpec);
    if (rawStatus != null) {
      Map<String, Object> keptStatus = new LinkedHashMap<>();
      name(status, "boundVolumeSnapshotContentName", keptStatus);
      props.put("status", keptStatus);
    }
    r.setAdditionalProperties(props);
    return r;
  }

  /** Copies the string {@code field} of {@code from}, quoted past {@link #NAME} characters. */
  private static void name(Map<String, Object> from, String field, Map<String, Object> to) {
    String v = Json.string(from.get(field));
    if (v != null) {
      to.put(field, v.length() <= NAME ? v : ClaimRef.quote(v));
    }
  }
}
