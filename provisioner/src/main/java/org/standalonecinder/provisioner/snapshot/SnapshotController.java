package org.standalonecinder.provisioner.snapshot;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.controller.ClusterCache;
import org.standalonecinder.provisioner.controller.EventRecorder;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.controller.RetryPolicy;
import org.standalonecinder.provisioner.controller.WorkQueue;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * The snapshot loop: the snapshot informers ({@link SnapshotCache}) feed a keyed, per-namespace
 * fair queue served by a few workers, which make the contents of dynamic snapshots of this
 * provisioner's claims ({@link SnapshotSync}) and serve the contents of its driver ({@link
 * ContentSync}). Failures are retried with the {@link RetryPolicy} and told as events on the
 * content and on its VolumeSnapshot. At each resync the sweep deletes Cinder snapshots taken for a
 * content that is gone under {@code Delete}.
 *
 * <p>It runs only where the cluster serves {@code snapshot.storage.k8s.io/v1}; until then it looks
 * again every minute. Like the claim loop, only the leader acts.
 */
public final class SnapshotController implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(SnapshotController.class);

  // Event reasons as the CSI snapshotter tells them.
  static final String CREATION_FAILED = "SnapshotCreationFailed";
  static final String DELETE_FAILED = "SnapshotDeleteError";
  static final String CONTENT_FAILED = "SnapshotContentCreationFailed";

  /** How soon an object that changed under a write is looked at again. */
  private static final Duration CONFLICT_DELAY = Duration.ofMillis(100);

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

  private final EventRecorder events;
  private final RetryPolicy retry;
  private final int workers;
  private final Duration resync;
  private final SnapshotCache cache;
  private final ContentSync contents;
  private final SnapshotSync snapshots;
  private final SnapshotMetrics metrics;
  private final WorkQueue<SnapshotKey> queue =
      new WorkQueue<>(k -> k instanceof SnapshotKey.Of o ? o.namespace() : "");
  private final Map<SnapshotKey, Integer> failures = new ConcurrentHashMap<>();
  private final List<Thread> threads = new ArrayList<>();
  private ScheduledExecutorService sweeper;
  private volatile boolean running;
  private volatile boolean active = true;

  /**
   * @param cluster the claim loop's view of claims and PVs (started by the claim loop)
   * @param workers how many keys are worked on at once
   * @param resync how often everything is looked at again and the sweep runs
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
      Clock clock,
      io.micrometer.core.instrument.MeterRegistry registry) {
    this.events = events;
    this.retry = retry;
    this.workers = workers;
    this.resync = resync;
    this.cache = new SnapshotCache(client, resync);
    this.metrics = new SnapshotMetrics(registry);
    metrics.queue(queue::size);
    ContentWrites writes = new ContentWrites(client);
    this.contents =
        new ContentSync(
            writes,
            cinder,
            cache::snapshotClass,
            settings.provisionerName(),
            settings.clusterId(),
            timing.deletion(),
            timing.poll(),
            clock,
            metrics);
    this.snapshots =
        new SnapshotSync(
            writes,
            cluster,
            cache::snapshotClass,
            name -> cache.content(name) != null,
            settings,
            metrics::contentMade);
    // A snapshot applied with its claim waits for the claim to be bound, not for a resync.
    cluster.alsoOnClaims(
        new ResourceEventHandler<>() {
          @Override
          public void onAdd(PersistentVolumeClaim c) {
            cache
                .unboundSnapshotsOf(c.getMetadata().getNamespace(), c.getMetadata().getName())
                .forEach(queue::add);
          }

          @Override
          public void onUpdate(PersistentVolumeClaim old, PersistentVolumeClaim c) {
            onAdd(c);
          }

          @Override
          public void onDelete(PersistentVolumeClaim c, boolean unknown) {}
        });
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
      cache.keys().forEach(queue::add);
    } finally {
      queue.paused(false);
    }
  }

  /** Whether the snapshot API was found and its informers have listed everything once. */
  public boolean serving() {
    return cache.synced();
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
      MDC.put(key instanceof SnapshotKey.Of ? "volumesnapshot" : "content", key.toString());
      try {
        process(key);
      } finally {
        MDC.clear();
        queue.done(key);
      }
    }
  }

  /**
   * Tells {@code listener} of every key worked on, once the work (and what it told) is done: what
   * tests wait for instead of sleeping.
   */
  void onProcessed(java.util.function.Consumer<SnapshotKey> listener) {
    this.processed = listener;
  }

  private volatile java.util.function.Consumer<SnapshotKey> processed = key -> {};

  private void process(SnapshotKey key) {
    try {
      work(key);
    } finally {
      processed.accept(key);
    }
  }

  private void work(SnapshotKey key) {
    GenericKubernetesResource about = null;
    try {
      Optional<Duration> again = Optional.empty();
      if (key instanceof SnapshotKey.ContentOf c) {
        // The cached copy, even just after this loop wrote the content: every step is looked up
        // before it is done (the Cinder snapshot by name and metadata), and every write carries
        // the resourceVersion read, so a copy the cache has not caught up with meets a 409 and is
        // looked at again (below) instead of costing a GET per content at every event and resync.
        about = cache.content(c.name());
        if (about != null && contents.ours(about)) {
          again = contents.sync(about);
        }
      } else if (key instanceof SnapshotKey.Of s) {
        about = cache.snapshot(s.namespace(), s.name());
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
      // One hostile object fails its own key, and no other: the worker goes on.
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
    if (content && about != null) {
      metrics.failed(contents.operation(Content.of(about)), isFinal);
    }
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
        String uid = c.snapshotUid() == null || c.snapshotUid().isEmpty() ? null : c.snapshotUid();
        ref.setMetadata(
            new ObjectMetaBuilder()
                .withNamespace(c.snapshotNamespace())
                .withName(c.snapshotName())
                .withUid(uid)
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
      cache.startIfServed(
          queue::add,
          key -> {
            failures.remove(key);
          });
      if (active && cache.synced()) {
        contents.sweep();
      }
    } catch (RuntimeException e) {
      LOG.info("snapshot housekeeping failed: {}", e.getMessage());
    }
    try {
      sweeper.schedule(
          this::housekeepingLoop,
          Math.max(1, cache.started() ? resync.toMillis() : cache.checkEvery().toMillis()),
          TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException closing) {
      // close() stopped the sweeper
    }
  }

  /** One sweep now (what the resync does): for tests. */
  void sweep() {
    contents.sweep();
  }

  @Override
  public void close() {
    running = false;
    if (sweeper != null) {
      sweeper.shutdownNow();
    }
    queue.shutDown();
    cache.close();
    for (Thread t : threads) {
      try {
        t.join(TimeUnit.SECONDS.toMillis(30));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
