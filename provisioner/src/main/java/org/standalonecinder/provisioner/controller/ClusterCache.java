package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.List;

/**
 * The claims, PVs and classes of the cluster as informers keep them: what the loop and its
 * provisioner read instead of asking the API server. A cache may lag behind the API server; a
 * reader that must not act on an old view (before a delete, say) asks the API server.
 */
public final class ClusterCache implements AutoCloseable {

  private final KubernetesClient client;
  private final Duration resync;
  private volatile SharedIndexInformer<PersistentVolumeClaim> claims;
  private volatile SharedIndexInformer<PersistentVolume> volumes;
  private volatile SharedIndexInformer<StorageClass> classes;

  /**
   * @param resync how often every object is handed to the handlers again
   */
  public ClusterCache(KubernetesClient client, Duration resync) {
    this.client = client;
    this.resync = resync;
  }

  /** Starts the informers, each telling its handler of every change. */
  void start(
      ResourceEventHandler<PersistentVolumeClaim> onClaim,
      ResourceEventHandler<PersistentVolume> onVolume) {
    long millis = resync.toMillis();
    classes = client.storage().v1().storageClasses().inform();
    volumes = client.persistentVolumes().inform(onVolume, millis);
    claims = client.persistentVolumeClaims().inAnyNamespace().inform(onClaim, millis);
  }

  /** Whether every informer has listed everything once. */
  public boolean synced() {
    return claims != null && claims.hasSynced() && volumes.hasSynced() && classes.hasSynced();
  }

  /** The claim, or null. */
  public PersistentVolumeClaim claim(String namespace, String name) {
    return claims == null ? null : claims.getStore().getByKey(namespace + "/" + name);
  }

  /** Every claim. */
  public List<PersistentVolumeClaim> claims() {
    return claims == null ? List.of() : claims.getStore().list();
  }

  /** The PV, or null. */
  public PersistentVolume volume(String name) {
    return volumes == null ? null : volumes.getStore().getByKey(name);
  }

  /** Every PV. */
  public List<PersistentVolume> volumes() {
    return volumes == null ? List.of() : volumes.getStore().list();
  }

  /** The class, or null. */
  public StorageClass storageClass(String name) {
    return classes == null ? null : classes.getStore().getByKey(name);
  }

  /** The PV, from the cache or else the API server: for a PV made a moment ago. */
  public PersistentVolume volumeNow(String name) {
    PersistentVolume pv = volume(name);
    return pv != null ? pv : client.persistentVolumes().withName(name).get();
  }

  @Override
  public void close() {
    for (SharedIndexInformer<?> i : new SharedIndexInformer<?>[] {claims, volumes, classes}) {
      if (i != null) {
        i.close();
      }
    }
  }
}
