package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The claims, PVs and classes of the cluster as informers keep them: what the loop and its
 * provisioner read instead of asking the API server. Claims are kept trimmed to what is read
 * ({@link ClaimStore}). A cache may lag behind the API server; a reader that must not act on an old
 * view (before a delete, say) asks the API server.
 */
public final class ClusterCache implements AutoCloseable {

  /**
   * Claims a list page holds: at most 30 MiB of tenants' claims read at once (an object may hold
   * 1.5 MiB), rather than every claim of the cluster in one answer; 2,000 claims are 100 requests.
   */
  static final long CLAIMS_PAGE = 20;

  /** The finalizers {@link #claimsWithFinalizer} finds claims by: the project's own. */
  public static final String OUR_FINALIZERS = "standalone-cinder.io/";

  /**
   * Kept in the cache in place of a claim's finalizers of ours past the first few ({@link
   * ClaimStore#FINALIZERS}): such a claim may hold any one of ours.
   */
  public static final String MORE_OF_OURS = OUR_FINALIZERS + "more-than-kept";

  private static final String BY_OUR_FINALIZER = "our-finalizers";

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
    classes = Informers.keepWatching(client.storage().v1().storageClasses().runnableInformer(0));
    classes.run();
    volumes = Informers.keepWatching(client.persistentVolumes().runnableInformer(millis));
    volumes.addEventHandler(onVolume).run();
    // Listed a page at a time and kept trimmed (ClaimStore): the claims are every tenant's, and
    // their size is theirs to choose.
    claims =
        Informers.keepWatching(
            client
                .persistentVolumeClaims()
                .inAnyNamespace()
                .withLimit(CLAIMS_PAGE)
                .runnableInformer(millis)
                .itemStore(new ClaimStore())
                .addIndexers(Map.of(BY_OUR_FINALIZER, ClusterCache::ourFinalizers))
                .addEventHandler(onClaim));
    claims.run();
    synchronized (alsoOnClaims) {
      alsoOnClaims.forEach(claims::addEventHandler);
    }
  }

  private final List<ResourceEventHandler<PersistentVolumeClaim>> alsoOnClaims =
      new java.util.ArrayList<>();

  /** Tells {@code handler} of every change of a claim too (another loop that reads claims). */
  public void alsoOnClaims(ResourceEventHandler<PersistentVolumeClaim> handler) {
    synchronized (alsoOnClaims) {
      if (claims != null) {
        claims.addEventHandler(handler);
      } else {
        alsoOnClaims.add(handler);
      }
    }
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

  /**
   * The claims that carry {@code finalizer}, one of the project's ({@link #OUR_FINALIZERS}), among
   * the first the cache keeps of each ({@link ClaimStore#FINALIZERS}): from an index kept as claims
   * change, not a scan of every claim of the cluster (a scan per deleted claim made a namespace's
   * deletion quadratic in the cluster's claims). A claim marked {@link #MORE_OF_OURS} may hold it
   * past those; a caller that knows which claim asks the API server for that one.
   */
  public List<PersistentVolumeClaim> claimsWithFinalizer(String finalizer) {
    if (!finalizer.startsWith(OUR_FINALIZERS)) {
      throw new IllegalArgumentException("not indexed: " + finalizer);
    }
    return claims == null ? List.of() : claims.getIndexer().byIndex(BY_OUR_FINALIZER, finalizer);
  }

  /**
   * Whether the cached claim carries {@code finalizer}, or may (it has more of ours than the cache
   * keeps).
   */
  public static boolean mayHaveFinalizer(PersistentVolumeClaim cached, String finalizer) {
    List<String> f = cached.getMetadata() == null ? null : cached.getMetadata().getFinalizers();
    return f != null && (f.contains(finalizer) || f.contains(MORE_OF_OURS));
  }

  private static List<String> ourFinalizers(PersistentVolumeClaim c) {
    List<String> f = c.getMetadata() == null ? null : c.getMetadata().getFinalizers();
    return f == null ? List.of() : f.stream().filter(n -> n.startsWith(OUR_FINALIZERS)).toList();
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
