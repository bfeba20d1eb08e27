package org.standalonecinder.provisioner.snapshot;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.api.ClassParameters;
import org.standalonecinder.provisioner.controller.Informers;

/**
 * The VolumeSnapshots, VolumeSnapshotContents and VolumeSnapshotClasses of the cluster as informers
 * keep them, started once the cluster serves the snapshot API; every change is handed on as a
 * {@link SnapshotKey}. The snapshots are any tenant's: listed a page at a time and kept trimmed
 * ({@link SnapshotStore}).
 */
final class SnapshotCache implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(SnapshotCache.class);

  private static final String BY_VOLUME = "content-volume";
  private static final String BY_SNAPSHOT_NAMESPACE = "content-snapshot-namespace";

  private static List<String> listOf(String v) {
    return v == null ? List.of() : List.of(v);
  }

  /** VolumeSnapshots a list page holds. */
  static final long PAGE = 50;

  private final KubernetesClient client;
  private final Duration resync;
  private volatile SharedIndexInformer<GenericKubernetesResource> snapshots;
  private volatile SharedIndexInformer<GenericKubernetesResource> contents;
  private volatile SharedIndexInformer<GenericKubernetesResource> classes;
  private String offBecause;
  private volatile boolean closed;
  private final List<SharedIndexInformer<?>> opened = new ArrayList<>();

  SnapshotCache(KubernetesClient client, Duration resync) {
    this.client = client;
    this.resync = resync;
  }

  /** Whether the informers run (the API was found). */
  boolean started() {
    return classes != null;
  }

  /** Whether the informers run and have listed everything once. */
  boolean synced() {
    var s = snapshots;
    var c = contents;
    var k = classes;
    return s != null && c != null && k != null && k.hasSynced() && c.hasSynced() && s.hasSynced();
  }

  /** How often the snapshot API is looked for while it is not served. */
  Duration checkEvery() {
    return resync.compareTo(Duration.ofMinutes(1)) < 0 ? resync : Duration.ofMinutes(1);
  }

  /**
   * Starts the informers if the cluster serves the snapshot API and this provisioner may read it
   * (said once when not, and once when it is). Once closed, starts nothing.
   *
   * @param changed told of every change
   * @param gone told of every object deleted
   */
  synchronized void startIfServed(Consumer<SnapshotKey> changed, Consumer<SnapshotKey> gone) {
    if (closed || classes != null || !served()) {
      return;
    }
    long millis = resync.toMillis();
    List<SharedIndexInformer<?>> mine = new ArrayList<>();
    try {
      var c =
          open(
              mine,
              client.genericKubernetesResources(SnapshotApi.CONTENTS).runnableInformer(millis));
      c.addIndexers(
          java.util.Map.of(
              BY_VOLUME,
              o -> listOf(Content.of(o).volumeHandle()),
              BY_SNAPSHOT_NAMESPACE,
              o -> listOf(Content.of(o).snapshotNamespace())));
      c.addEventHandler(handler(SnapshotCache::contentKey, changed, gone)).run();
      var s =
          open(
              mine,
              client
                  .genericKubernetesResources(SnapshotApi.SNAPSHOTS)
                  .inAnyNamespace()
                  .withLimit(PAGE)
                  .runnableInformer(millis)
                  .itemStore(new SnapshotStore()));
      s.addEventHandler(handler(SnapshotCache::snapshotKey, changed, gone)).run();
      var k =
          open(mine, client.genericKubernetesResources(SnapshotApi.CLASSES).runnableInformer(0));
      k.run();
      // Published together, the classes' last (what says they run): no reader meets half.
      contents = c;
      snapshots = s;
      classes = k;
    } catch (RuntimeException e) {
      synchronized (opened) {
        mine.forEach(SharedIndexInformer::close);
        opened.removeAll(mine);
      }
      if (closed) {
        // close() stopped the start under way: nothing to say, nothing left running.
        return;
      }
      throw e;
    }
    LOG.info("snapshots: the cluster serves {}", SnapshotApi.API_VERSION);
  }

  /**
   * Registers an informer before it runs, so that a close() meeting a start under way stops it too;
   * after a close, refuses (an informer started then would run on, unowned, or on a client already
   * closed).
   */
  private <T> SharedIndexInformer<T> open(
      List<SharedIndexInformer<?>> mine, SharedIndexInformer<T> informer) {
    synchronized (opened) {
      if (closed) {
        informer.close();
        throw new IllegalStateException("snapshot cache closed");
      }
      opened.add(informer);
      mine.add(informer);
    }
    return Informers.keepWatching(informer);
  }

  private void closeOpened() {
    synchronized (opened) {
      opened.forEach(SharedIndexInformer::close);
    }
  }

  /** How many of the informers this cache opened still run: for tests. */
  long running() {
    synchronized (opened) {
      return opened.stream().filter(SharedIndexInformer::isRunning).count();
    }
  }

  private boolean served() {
    String why;
    try {
      client
          .genericKubernetesResources(SnapshotApi.CLASSES)
          .list(new ListOptionsBuilder().withLimit(1L).build());
      return true;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        why = "the cluster serves no " + SnapshotApi.API_VERSION + " (no snapshot CRDs)";
      } else if (e.getCode() == 403) {
        why = "this provisioner may not list volumesnapshotclasses (its RBAC)";
      } else {
        throw e;
      }
    }
    if (!why.equals(offBecause)) {
      offBecause = why;
      LOG.info("snapshots are off: {}; looked at again every {}s", why, checkEvery().toSeconds());
    }
    return false;
  }

  static SnapshotKey contentKey(GenericKubernetesResource c) {
    return new SnapshotKey.ContentOf(c.getMetadata().getName());
  }

  static SnapshotKey snapshotKey(GenericKubernetesResource s) {
    return new SnapshotKey.Of(s.getMetadata().getNamespace(), s.getMetadata().getName());
  }

  private static ResourceEventHandler<GenericKubernetesResource> handler(
      java.util.function.Function<GenericKubernetesResource, SnapshotKey> key,
      Consumer<SnapshotKey> changed,
      Consumer<SnapshotKey> gone) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(GenericKubernetesResource obj) {
        changed.accept(key.apply(obj));
      }

      @Override
      public void onUpdate(GenericKubernetesResource oldObj, GenericKubernetesResource newObj) {
        onAdd(newObj);
      }

      @Override
      public void onDelete(GenericKubernetesResource obj, boolean deletedFinalStateUnknown) {
        gone.accept(key.apply(obj));
      }
    };
  }

  private static GenericKubernetesResource get(
      SharedIndexInformer<GenericKubernetesResource> informer, String key) {
    return informer == null ? null : informer.getStore().getByKey(key);
  }

  GenericKubernetesResource content(String name) {
    return get(contents, name);
  }

  GenericKubernetesResource snapshot(String namespace, String name) {
    return get(snapshots, namespace + "/" + name);
  }

  /**
   * How long after a snapshot's creation a class it names that the cache lacks is asked of the API
   * server (a class applied with its snapshot may reach the cache after it). Past that, a class the
   * cache lacks does not exist: a tenant's snapshots that name none cost no call at each resync.
   */
  static final Duration CLASS_LAG = Duration.ofMinutes(2);

  /** The class from the cache, else the API server: one made a moment before its content. */
  SnapshotClass snapshotClass(String name) {
    return snapshotClass(name, true);
  }

  /** The class {@code s} names: asked of the API server only while {@code s} is new. */
  SnapshotClass classOf(VolumeSnapshot s) {
    boolean young;
    try {
      young =
          s.created() == null
              || java.time.Instant.parse(s.created())
                  .isAfter(java.time.Instant.now().minus(CLASS_LAG));
    } catch (java.time.format.DateTimeParseException e) {
      young = false;
    }
    return snapshotClass(s.className(), young);
  }

  private SnapshotClass snapshotClass(String name, boolean ask) {
    // A tenant's name goes into no API path unless it can name a class.
    if (!ClassParameters.isDnsSubdomain(name)) {
      return null;
    }
    GenericKubernetesResource r = get(classes, name);
    if (r == null && ask) {
      r = client.genericKubernetesResources(SnapshotApi.CLASSES).withName(name).get();
    }
    return r == null ? null : SnapshotClass.of(r);
  }

  /** The caps on what is kept, counted in this cache's contents of {@code driver}. */
  KeptCaps caps(String driver, SnapshotLimits limits, java.time.Clock clock) {
    return new KeptCaps(
        limits,
        v -> contentsOfVolume(v, driver),
        ns -> contentsInNamespace(ns, driver),
        name -> content(name) != null,
        clock);
  }

  /** How many contents of {@code driver} snapshot volume {@code volumeId}: from an index. */
  int contentsOfVolume(String volumeId, String driver) {
    return count(BY_VOLUME, volumeId, driver);
  }

  /** How many contents of {@code driver} are for the VolumeSnapshots of {@code namespace}. */
  int contentsInNamespace(String namespace, String driver) {
    return count(BY_SNAPSHOT_NAMESPACE, namespace, driver);
  }

  private int count(String index, String value, String driver) {
    var c = contents;
    return c == null
        ? 0
        : (int)
            c.getIndexer().byIndex(index, value).stream()
                .filter(o -> driver.equals(Content.of(o).driver()))
                .count();
  }

  /** Every key the caches hold. */
  List<SnapshotKey> keys() {
    List<SnapshotKey> all = new ArrayList<>();
    var c = contents;
    var s = snapshots;
    if (c != null) {
      c.getStore().list().forEach(o -> all.add(contentKey(o)));
    }
    if (s != null) {
      s.getStore().list().forEach(o -> all.add(snapshotKey(o)));
    }
    return all;
  }

  /** The keys of the snapshots of a claim that have no content yet. */
  List<SnapshotKey> unboundSnapshotsOf(String namespace, String claim) {
    var informer = snapshots;
    if (informer == null) {
      return List.of();
    }
    return informer.getIndexer().byIndex(Cache.NAMESPACE_INDEX, namespace).stream()
        .map(VolumeSnapshot::of)
        .filter(s -> claim.equals(s.claimName()) && s.boundContentName() == null)
        .map(s -> (SnapshotKey) new SnapshotKey.Of(s.namespace(), s.name()))
        .toList();
  }

  /**
   * Stops every informer, a start under way's too, and every later start. It does not wait for a
   * start under way: one whose first list is in flight may still see it fail and say so once.
   */
  @Override
  public void close() {
    closed = true;
    closeOpened();
  }
}
