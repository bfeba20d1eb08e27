package org.standalonecinder.webhook.policy;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.Optional;

/** What the claim rules need to look up in the cluster (informer caches and the API). */
public interface ClusterView {

  Optional<StorageClass> storageClass(String name);

  Optional<PersistentVolumeClaim> claim(String namespace, String name);

  /** The PersistentVolume of that name; empty when there is none. */
  Optional<PersistentVolume> volume(String name);

  /** The namespace's labels; empty when it has none or does not exist. */
  java.util.Map<String, String> namespaceLabels(String namespace);

  /**
   * Whether the user may create pods in the namespace (a SubjectAccessReview): whoever may do that
   * can mount the namespace's claims and read their data anyway, so may clone them.
   */
  boolean canCreatePods(UserInfo user, String namespace);

  /**
   * A page of the ReferenceGrants in the namespace ({@link
   * org.standalonecinder.api.ReferenceGrants}), from the continue token of the previous one (null
   * for the first); empty where the kind is not installed.
   */
  org.standalonecinder.api.ReferenceGrants.Page referenceGrants(String namespace, String next);
}
