package org.standalonecinder.provisioner.controller;

/**
 * What a worker works on: a claim, by namespace and name, or a PV, by name. A key names an object,
 * not a version of it: the worker reads the object's latest state from the cache when it starts.
 */
public sealed interface WorkKey {

  /** A claim. */
  record Claim(String namespace, String name) implements WorkKey {
    /** {@code namespace/name}, the informer cache's key. */
    @Override
    public String toString() {
      return namespace + "/" + name;
    }
  }

  /** A PersistentVolume. */
  record Volume(String name) implements WorkKey {
    @Override
    public String toString() {
      return name;
    }
  }
}
