package org.standalonecinder.provisioner.provision;

import io.fabric8.kubernetes.api.model.Secret;

/** Where the auth Secrets of PVs are kept (the Kubernetes API; a map in tests). */
public interface SecretStore {

  /** Creates the Secret, or replaces one of the same name. */
  void put(Secret secret);

  /** Deletes the Secret; one that does not exist counts as deleted. */
  void delete(String namespace, String name);
}
