package org.standalonecinder.provisioner.clone;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.Optional;

/**
 * What cloning reads from the cluster, fresh from the API server (a cache could hand a clone a
 * source that is already going away): the source claim, its PV, the clone token keys, and whether
 * the requester of a clone may still read the source.
 */
public interface ClusterReader {

  Optional<PersistentVolumeClaim> claim(String namespace, String name);

  Optional<PersistentVolume> volume(String name);

  Optional<StorageClass> storageClass(String name);

  /** The keys of the webhook's clone tokens; empty when no webhook has created them. */
  Optional<org.standalonecinder.api.CloneToken.Keys> cloneTokenKeys();

  /**
   * Whether the principal may create pods in the namespace now (a SubjectAccessReview): the
   * authorization a clone across namespaces was admitted on, asked again when the clone is made.
   */
  boolean canCreatePods(org.standalonecinder.api.CloneToken.Principal principal, String namespace);

  /**
   * A page of the ReferenceGrants in the namespace ({@link
   * org.standalonecinder.api.ReferenceGrants}), from the continue token of the previous one (null
   * for the first); empty where the kind is not installed.
   */
  org.standalonecinder.api.ReferenceGrants.Page referenceGrants(String namespace, String next);

  /**
   * The text of the admin's clone policy, the webhook's policy file as its ConfigMap holds it;
   * empty when there is none (the webhook then runs on its defaults).
   */
  Optional<String> clonePolicy();
}
