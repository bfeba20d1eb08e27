package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Base64;
import java.util.Optional;
import org.standalonecinder.api.CloneToken;
import org.standalonecinder.provisioner.provision.ClusterReader;

/** {@link ClusterReader} on the API server, uncached. */
public final class KubernetesClusterReader implements ClusterReader {

  private final KubernetesClient client;
  private final String ownNamespace;

  /**
   * @param ownNamespace where the clone token key Secret lives (the provisioner's namespace)
   */
  public KubernetesClusterReader(KubernetesClient client, String ownNamespace) {
    this.client = client;
    this.ownNamespace = ownNamespace;
  }

  @Override
  public Optional<PersistentVolumeClaim> claim(String namespace, String name) {
    return Optional.ofNullable(
        client.persistentVolumeClaims().inNamespace(namespace).withName(name).get());
  }

  @Override
  public Optional<PersistentVolume> volume(String name) {
    return Optional.ofNullable(client.persistentVolumes().withName(name).get());
  }

  @Override
  public Optional<StorageClass> storageClass(String name) {
    return Optional.ofNullable(client.storage().v1().storageClasses().withName(name).get());
  }

  @Override
  public Optional<byte[]> cloneTokenKey() {
    Secret s = client.secrets().inNamespace(ownNamespace).withName(CloneToken.KEY_SECRET).get();
    String v = s == null || s.getData() == null ? null : s.getData().get(CloneToken.KEY_FIELD);
    return v == null ? Optional.empty() : Optional.of(Base64.getDecoder().decode(v));
  }
}
