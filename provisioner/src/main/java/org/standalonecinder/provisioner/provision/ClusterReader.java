package org.standalonecinder.provisioner.provision;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.Optional;

/**
 * What cloning reads from the cluster, fresh from the API server (a cache could hand a clone a
 * source that is already going away): the source claim, its PV, and the clone token key.
 */
public interface ClusterReader {

  Optional<PersistentVolumeClaim> claim(String namespace, String name);

  Optional<PersistentVolume> volume(String name);

  Optional<StorageClass> storageClass(String name);

  /** The key the webhook signs clone tokens with; empty when no webhook has created it. */
  Optional<byte[]> cloneTokenKey();
}
