package org.standalonecinder.provisioner.provision;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.standalonecinder.provisioner.mapping.SecretRefs;

/** PV auth Secrets in the Kubernetes API. */
public final class KubernetesSecretStore implements SecretStore {

  private final KubernetesClient client;

  public KubernetesSecretStore(KubernetesClient client) {
    this.client = client;
  }

  @Override
  public void put(Secret secret) {
    var ops = client.secrets().inNamespace(secret.getMetadata().getNamespace());
    // Created without a look first: a provisioning's Secret is new but for a retried attempt,
    // so the common case costs one call and the 409 tells of the other.
    try {
      ops.resource(secret).create();
      return;
    } catch (KubernetesClientException e) {
      if (e.getCode() != 409) {
        throw e;
      }
    }
    var existing = ops.withName(secret.getMetadata().getName()).get();
    if (existing == null) {
      // Deleted between the two calls: the next attempt creates it.
      throw new IllegalStateException(
          "Secret "
              + secret.getMetadata().getNamespace()
              + "/"
              + secret.getMetadata().getName()
              + " existed and is gone; trying again");
    }
    Map<String, String> labels = existing.getMetadata().getLabels();
    if (labels == null || !Names.MANAGED_BY.equals(labels.get(Names.LABEL_MANAGED_BY))) {
      // Someone else's Secret (an admin's, by a clash of names): never overwrite credentials.
      throw new IllegalStateException(
          "Secret "
              + secret.getMetadata().getNamespace()
              + "/"
              + secret.getMetadata().getName()
              + " exists and was not made by standalone-cinder (no label "
              + Names.LABEL_MANAGED_BY
              + "="
              + Names.MANAGED_BY
              + "); rename or remove it");
    }
    // A retried attempt, or a rotated key: replace the credentials.
    ops.withName(secret.getMetadata().getName())
        .patch(PatchContext.of(PatchType.JSON_MERGE), secret);
  }

  @Override
  public void delete(String namespace, String name) {
    client.secrets().inNamespace(namespace).withName(name).delete();
  }

  @Override
  public Optional<Secret> get(String namespace, String name) {
    return Optional.ofNullable(client.secrets().inNamespace(namespace).withName(name).get());
  }

  @Override
  public List<Secret> list(String namespace, Map<String, String> labels) {
    return client.secrets().inNamespace(namespace).withLabels(labels).list().getItems();
  }

  @Override
  public boolean referenced(String namespace, String name, String exceptPv) {
    for (PersistentVolume pv : client.persistentVolumes().list().getItems()) {
      if (!pv.getMetadata().getName().equals(exceptPv)
          && SecretRefs.refersTo(pv.getSpec(), namespace, name)) {
        return true;
      }
    }
    return false;
  }
}
