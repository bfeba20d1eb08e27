package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import org.standalonecinder.provisioner.provision.SecretStore;

/** PV auth Secrets in the Kubernetes API. */
public final class KubernetesSecretStore implements SecretStore {

  private final KubernetesClient client;

  public KubernetesSecretStore(KubernetesClient client) {
    this.client = client;
  }

  @Override
  public void put(Secret secret) {
    var ops = client.secrets().inNamespace(secret.getMetadata().getNamespace());
    var existing = ops.withName(secret.getMetadata().getName()).get();
    if (existing == null) {
      ops.resource(secret).create();
    } else {
      // A retried attempt: the export's credentials may have changed; replace them.
      ops.withName(secret.getMetadata().getName())
          .patch(PatchContext.of(PatchType.JSON_MERGE), secret);
    }
  }

  @Override
  public void delete(String namespace, String name) {
    client.secrets().inNamespace(namespace).withName(name).delete();
  }
}
