package org.standalonecinder.provisioner.snapshot;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ListOptionsBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.controller.ClusterCache;
import org.standalonecinder.provisioner.controller.EventRecorder;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.controller.RetryPolicy;
import org.standalonecinder.provisioner.controller.WorkQueue;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * The snapshot loop: informers on VolumeSnapshots, VolumeSnapshotContents and VolumeSnapshotClasses
 * feed a keyed, per-namespace fair queue served by a few workers, which make the contents of
 * dynamic snapshots of this provisioner's claims ({@link SnapshotSync}) and serve the contents of
 * its driver ({@link ContentSync}). Failures are retried with the {@link RetryPolicy} and told as
 * events on the content and on its VolumeSnapshot. At each resync a sweep deletes Cinder snapshots
 * taken for a content that is gone under the {@code Delete} policy (a content deleted before its
 * finalizer was set).
 *
 * <p>It runs only where the cluster serves {@code snapshot.storage.k8s.io/v1}; until then it looks
 * again at each resync.
 */
public final class SnapshotController implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(SnapshotController.class);

  // Event reasons as the CSI snapshotter tells them.
  static final String CREATION_FAILED = "SnapshotCreationFailed";
  static final String DELETE_FAILED = "SnapshotDeleteError";
  static final String CONTENT_FAILED = "SnapshotContentCreationFailed";

  /** How soon an object that changed under a write is looked at again. */
  private static final Duration CONFLICT_DELAY = Duration.ofMillis(100);

  /** VolumeSnapshots a list page holds: they are any tenant's. */
  static final long PAGE = 50;

  private final KubernetesClient client;
  private final CinderClient cinder;
  private final ProvisionerSettings settings;
  private final EventRecorder events;
  private final RetryPolicy retry;
  private final int workers;
  private final Duration resync;
  private final ContentSync contents;
  private final SnapshotSync snapshots;
  private final WorkQueue<SnapshotKey> queue =
      new WorkQueue<>(k -> k instanceof SnapshotKey.Of o ? o.namespace() : "");
  private final Map<SnapshotKey, Integer> failures = new ConcurrentHashMap<>();
  private final List<Thread> threads = new ArrayList<>();

  private volatile SharedIndexInformer<GenericKubernetesResource> snapshotInformer;
  private volatile SharedIndexInformer<GenericKubernetesResource> contentInformer;
  private volatile SharedIndexInformer<GenericKubernetesResource> classInformer;
  private ScheduledExecutorService sweeper;
  private volatile boolean running;
  private volatile boolean active = true;
  private String offBecause;

  /**
   * How long the loop waits for Cinder.
   *
   * @param deletion how long a snapshot's deletion is waited for
   * @param poll how soon a snapshot still being taken is looked at again
   */
  public record Timing(Backoff deletion, Duration poll) {
    public static final Timing DEFAULT =
        new Timing(
            new Backoff(Duration.ofMillis(200), 2.0, Duration.ofSeconds(5), Duration.ofMinutes(2)),
            ContentSync.POLL);
  }

  /**
   * @param cluster the claim loop's view of claims and PVs (started by the claim loop)
   */
  public SnapshotController(
      KubernetesClient client,
      ClusterCache cluster,
      CinderClient cinder,
      ProvisionerSettings settings,
      EventRecorder events,
      RetryPolicy retry,
      int workers,
      Duration resync,
      Timing timing,
      Clock clock) {
    this.client = client;
    this.cinder = cinder;
    this.settings = settings;
    this.events = events;
    this.retry = retry;
    this.workers = workers;
    this.resync = resync;
    ContentWrites writes = new ContentWrites(client);
    // A snapshot applied with its claim waits for the claim to be bound, not for a resync.
    cluster.alsoOnClaims(
        new ResourceEventHandler<>() {
          @Override
          public void onAdd(io.fabric8.kubernetes.api.model.PersistentVolumeClaim c) {
            snapshotsOf(c.getMetadata().getNamespace(), c.getMetadata().getName())
                .forEach(queue::add);
          }

          @Override
          public void onUpdate(
              io.fabric8.kubernetes.api.model.PersistentVolumeClaim old,
              io.fabric8.kubernetes.api.model.PersistentVolumeClaim c) {
            onAdd(c);
          }

          @Override
          public void onDelete(
              io.fabric8.kubernetes.api.model.PersistentVolumeClaim c, boolean unknown) {}
        });
    this.contents =
        new ContentSync(
            writes,
            cinder,
            settings.provisionerName(),
            settings.clusterId(),
            timing.deletion(),
            timing.poll(),
            clock);
    this.snapshots =
        new SnapshotSync(
            writes,
            cluster,
            this::snapshotClass,
            name -> cached(contentInformer, name) != null,
            settings);
  }

  /** Starts the workers and, once the cluster serves the snapshot API, the informers. */
  public void start() {
    running = true;
    queue.paused(!active);
    for (int i = 0; i < workers; i++) {
      Thread t = new Thread(this::work, "snapshot-worker-" + i);
      t.setDaemon(true);
      threads.add(t);
      t.start();
    }
    sweeper =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "snapshot-housekeeping");
              t.setDaemon(true);
              return t;
            });
    sweeper.execute(this::housekeepingLoop);
  }

  /** Stops acting (a standby); the informers go on. */
  public void pause() {
    active = false;
    queue.paused(true);
  }

  /** Acts again, looking at every snapshot and content afresh. */
  public void resume() {
    active = true;
    try {
      requeueAll();
    } finally {
      queue.paused(false);
    }
  }

  /** Whether the snapshot API was found and its informers have listed everything once. */
  public boolean serving() {
    return classInformer != null
        && contentInformer != null
        && snapshotInformer != null
        && classInformer.hasSynced()
        && contentInformer.hasSynced()
        && snapshotInformer.hasSynced();
  }

  /** Queues everything the caches hold; nothing before the informers run (they queue it all). */
  private void requeueAll() {
    var contents = contentInformer;
    var snaps = snapshotInformer;
    if (contents != null) {
      contents.getStore().list().forEach(c -> queue.add(contentKey(c)));
    }
    if (snaps != null) {
      snaps.getStore().list().forEach(s -> queue.add(snapshotKey(s)));
    }
  }

  /**
   * Whether the cluster serves the snapshot API (its CRDs are installed) and this provisioner may
   * read it; said once when not, and once when it is.
   */
  private boolean apiServed() {
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

  /** How often the snapshot API is looked for while it is not served. */
  private Duration checkEvery() {
    return resync.compareTo(Duration.ofMinutes(1)) < 0 ? resync : Duration.ofMinutes(1);
  }

  /**
   * Starts the three informers. Published together, the classes' last (what says they run), so that
   * no reader meets one half started; if one cannot start, those started are closed and the next
   * housekeeping round tries again.
   */
  private synchronized void startInformers() {
    if (classInformer != null) {
      return;
    }
    long millis = resync.toMillis();
    List<SharedIndexInformer<GenericKubernetesResource>> started = new ArrayList<>();
    try {
      var contents =
          client
              .genericKubernetesResources(SnapshotApi.CONTENTS)
              .inform(handler(SnapshotController::contentKey), millis);
      started.add(contents);
      var snaps =
          client
              .genericKubernetesResources(SnapshotApi.SNAPSHOTS)
              .inAnyNamespace()
              .withLimit(PAGE)
              .runnableInformer(millis)
              .itemStore(new SnapshotStore())
              .addEventHandler(handler(SnapshotController::snapshotKey))
              .run();
      started.add(snaps);
      var classes =
          client.genericKubernetesResources(SnapshotApi.CLASSES).inform(handler(null), millis);
      contentInformer = contents;
      snapshotInformer = snaps;
      classInformer = classes;
    } catch (RuntimeException e) {
      started.forEach(SharedIndexInformer::close);
      throw e;
    }
    LOG.info("snapshots: serving VolumeSnapshotClasses of driver {}", settings.provisionerName());
  }

  private static SnapshotKey contentKey(GenericKubernetesResource c) {
    return new SnapshotKey.ContentOf(c.getMetadata().getName());
  }

  private static SnapshotKey snapshotKey(GenericKubernetesResource s) {
    return new SnapshotKey.Of(s.getMetadata().getNamespace(), s.getMetadata().getName());
  }

  private ResourceEventHandler<GenericKubernetesResource> handler(
      Function<GenericKubernetesResource, SnapshotKey> key) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(GenericKubernetesResource obj) {
        if (key != null) {
          queue.add(key.apply(obj));
        }
      }

      @Override
      public void onUpdate(GenericKubernetesResource oldObj, GenericKubernetesResource newObj) {
        onAdd(newObj);
      }

      @Override
      public void onDelete(GenericKubernetesResource obj, boolean deletedFinalStateUnknown) {
        if (key != null) {
          failures.remove(key.apply(obj));
        }
      }
    };
  }

  /** The keys of the snapshots of a claim that have no content yet. */
  private List<SnapshotKey> snapshotsOf(String namespace, String claim) {
    var informer = snapshotInformer;
    if (informer == null) {
      return List.of();
    }
    return informer.getIndexer().byIndex(Cache.NAMESPACE_INDEX, namespace).stream()
        .map(VolumeSnapshot::of)
        .filter(s -> claim.equals(s.claimName()) && s.boundContentName() == null)
        .map(s -> (SnapshotKey) new SnapshotKey.Of(s.namespace(), s.name()))
        .toList();
  }

  private static GenericKubernetesResource cached(
      SharedIndexInformer<GenericKubernetesResource> informer, String key) {
    return informer == null ? null : informer.getStore().getByKey(key);
  }

  /** The class from the cache, else the API server: one made a moment before its snapshot. */
  private SnapshotClass snapshotClass(String name) {
    GenericKubernetesResource r = cached(classInformer, name);
    if (r == null) {
      r = client.genericKubernetesResources(SnapshotApi.CLASSES).withName(name).get();
    }
    return r == null ? null : SnapshotClass.of(r);
  }

  private void work() {
    while (running) {
      SnapshotKey key;
      try {
        key = queue.take();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      if (key == null) {
        return;
      }
      org.slf4j.MDC.put(
          key instanceof SnapshotKey.Of ? "volumesnapshot" : "content", key.toString());
      try {
        process(key);
      } finally {
        org.slf4j.MDC.clear();
        queue.done(key);
      }
    }
  }

  private void process(SnapshotKey key) {
    GenericKubernetesResource about = null;
    try {
      Optional<Duration> again = Optional.empty();
      if (key instanceof SnapshotKey.ContentOf c) {
        about = cached(contentInformer, c.name());
        if (about != null && contents.ours(about)) {
          // Written a moment ago by this loop: the cache may not have it yet.
          GenericKubernetesResource now =
              client.genericKubernetesResources(SnapshotApi.CONTENTS).withName(c.name()).get();
          about = now;
          if (now != null) {
            again = contents.sync(now);
          }
        }
      } else if (key instanceof SnapshotKey.Of s) {
        about = cached(snapshotInformer, s.namespace() + "/" + s.name());
        if (about != null) {
          snapshots.sync(VolumeSnapshot.of(about));
        }
      }
      failures.remove(key);
      again.ifPresent(d -> queue.addAfter(key, d));
    } catch (ProvisioningException e) {
      failed(key, about, e.getMessage(), e.isFinal(), e.reason());
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        // Changed since it was read (the snapshot-controller adds its finalizer as the content
        // is first served): read again at once, no failure.
        LOG.debug("{}: changed meanwhile, looking again", key);
        queue.addAfter(key, CONFLICT_DELAY);
      } else {
        LOG.debug("{} failed", key, e);
        failed(key, about, e.toString(), false, null);
      }
    } catch (RuntimeException e) {
      LOG.debug("{} failed", key, e);
      failed(key, about, e.toString(), false, null);
    } catch (OutOfMemoryError e) {
      throw e;
    } catch (Error e) {
      LOG.warn("{}: {} while working on it", key, e.toString());
      failed(key, about, "internal error: " + e, false, null);
    }
  }

  private void failed(
      SnapshotKey key,
      GenericKubernetesResource about,
      String message,
      boolean isFinal,
      String reason) {
    boolean content = key instanceof SnapshotKey.ContentOf;
    if (reason == null) {
      reason = content ? CREATION_FAILED : CONTENT_FAILED;
    }
    int n = failures.merge(key, 1, Integer::sum);
    boolean giveUp = isFinal || retry.exhausted(n);
    String note = giveUp && !isFinal ? message + " (gave up after " + n + " attempts)" : message;
    boolean told = about != null && tell(about, content, reason, note);
    LOG.atLevel(told ? org.slf4j.event.Level.WARN : org.slf4j.event.Level.DEBUG)
        .log("{}: {}", key, note);
    if (giveUp) {
      failures.remove(key);
    } else {
      queue.addAfter(key, retry.delay(n));
    }
  }

  /** Tells the object, and for a content its VolumeSnapshot too (what users describe). */
  private boolean tell(
      GenericKubernetesResource about, boolean content, String reason, String note) {
    boolean told = events.warning(about, reason, note);
    if (content) {
      Content c = Content.of(about);
      if (c.snapshotNamespace() != null && c.snapshotName() != null) {
        GenericKubernetesResource ref = new GenericKubernetesResource();
        ref.setApiVersion(SnapshotApi.API_VERSION);
        ref.setKind("VolumeSnapshot");
        ref.setMetadata(
            new ObjectMetaBuilder()
                .withNamespace(c.snapshotNamespace())
                .withName(c.snapshotName())
                .withUid(
                    c.snapshotUid() == null || c.snapshotUid().isEmpty() ? null : c.snapshotUid())
                .build());
        events.warning(ref, reason, note);
      }
    }
    return told;
  }

  private void housekeepingLoop() {
    if (!running) {
      return;
    }
    try {
      if (classInformer == null && apiServed()) {
        startInformers();
      }
      if (active && serving()) {
        sweep();
      }
    } catch (RuntimeException e) {
      LOG.info("snapshot housekeeping failed: {}", e.getMessage());
    }
    try {
      sweeper.schedule(
          this::housekeepingLoop,
          Math.max(1, serving() ? resync.toMillis() : checkEvery().toMillis()),
          TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException closing) {
      // close() stopped the sweeper
    }
  }

  /**
   * Deletes Cinder snapshots this cluster took for a content that is gone, when the content's
   * policy was {@code Delete} as last seen: a content deleted before the snapshot-controller's
   * finalizer held it, or while this provisioner was down.
   */
  void sweep() {
    Map<String, String> ours =
        Map.of(org.standalonecinder.provisioner.provision.Names.META_CLUSTER, settings.clusterId());
    for (var s : cinder.findSnapshots(null, ours)) {
      String content = s.metadata().get(SnapshotApi.META_CONTENT);
      if (content == null
          || !SnapshotApi.DELETE.equals(s.metadata().get(SnapshotApi.META_POLICY))
          || "creating".equals(s.status())
          || "deleting".equals(s.status())) {
        continue;
      }
      if (client.genericKubernetesResources(SnapshotApi.CONTENTS).withName(content).get() != null) {
        continue;
      }
      LOG.info(
          "Cinder snapshot {} was taken for content {}, which is gone: deleting it",
          s.id(),
          content);
      cinder.deleteSnapshot(s.id());
    }
  }

  @Override
  public void close() {
    running = false;
    if (sweeper != null) {
      sweeper.shutdownNow();
    }
    queue.shutDown();
    for (SharedIndexInformer<?> i :
        new SharedIndexInformer<?>[] {snapshotInformer, contentInformer, classInformer}) {
      if (i != null) {
        i.close();
      }
    }
    for (Thread t : threads) {
      try {
        t.join(TimeUnit.SECONDS.toMillis(30));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** For tests: whether {@code key} comes back later. */
  boolean scheduled(SnapshotKey key) {
    return queue.scheduled(key);
  }

  HasMetadata content(String name) {
    return cached(contentInformer, name);
  }
}
