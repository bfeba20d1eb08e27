package org.standalonecinder.provisioner.snapshot;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.informers.cache.BasicItemStore;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The VolumeSnapshot informer's store: of each snapshot, any tenant's, it keeps only its spec and
 * status and the metadata a write or an event needs, never its annotations, labels or managed
 * fields (up to 256 KiB each, the tenant's to fill), as the claims' store does.
 */
final class SnapshotStore extends BasicItemStore<GenericKubernetesResource> {

  SnapshotStore() {
    super(Cache::metaNamespaceKeyFunc);
  }

  @Override
  public GenericKubernetesResource put(String key, GenericKubernetesResource obj) {
    return super.put(key, trim(obj));
  }

  static GenericKubernetesResource trim(GenericKubernetesResource r) {
    ObjectMeta m = r.getMetadata();
    GenericKubernetesResource kept = new GenericKubernetesResource();
    kept.setApiVersion(r.getApiVersion());
    kept.setKind(r.getKind());
    if (m != null) {
      kept.setMetadata(
          new ObjectMetaBuilder()
              .withName(m.getName())
              .withNamespace(m.getNamespace())
              .withUid(m.getUid())
              .withResourceVersion(m.getResourceVersion())
              .withCreationTimestamp(m.getCreationTimestamp())
              .withDeletionTimestamp(m.getDeletionTimestamp())
              .build());
    }
    Map<String, Object> props = new LinkedHashMap<>();
    for (String field : new String[] {"spec", "status"}) {
      Object v = r.getAdditionalProperties().get(field);
      if (v != null) {
        props.put(field, v);
      }
    }
    kept.setAdditionalProperties(props);
    return kept;
  }
}
