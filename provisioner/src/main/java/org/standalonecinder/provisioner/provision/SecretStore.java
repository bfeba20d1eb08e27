package org.standalonecinder.provisioner.provision;

import io.fabric8.kubernetes.api.model.Secret;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Where the auth Secrets of PVs are kept, and the admin's Secrets read (the Kubernetes API; a map
 * in tests).
 */
public interface SecretStore {

  /**
   * Creates the Secret, or replaces one of the same name that this provisioner made.
   *
   * @throws IllegalStateException when a Secret of that name exists and is not ours
   */
  void put(Secret secret);

  /** Deletes the Secret; one that does not exist counts as deleted. */
  void delete(String namespace, String name);

  /** The Secret, read from the API server (not a cache), or empty when there is none. */
  Optional<Secret> get(String namespace, String name);

  /** The Secrets of the namespace that carry all these labels. */
  List<Secret> list(String namespace, Map<String, String> labels);

  /**
   * Whether any PersistentVolume but {@code exceptPv} refers to the Secret, asked of the API
   * server.
   */
  boolean referenced(String namespace, String name, String exceptPv);
}
