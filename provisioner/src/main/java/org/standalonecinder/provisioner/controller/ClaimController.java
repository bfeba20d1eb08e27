package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * The claim loop, knowing nothing of the storage behind it: informers feed a keyed work queue
 * ({@link WorkKey}) served by N workers, a key is never worked on twice at once, and each key is
 * worked on by {@link ClaimSync}, which calls the {@link Provisioner} where storage is made or
 * removed. Failures are retried per key with the {@link RetryPolicy}; final failures and exhausted
 * retries end with a Warning event. Every key is looked at again at each resync, and the
 * provisioner's {@link Provisioner#housekeeping} runs then.
 *
 * <p>Binding is not ours: the PV carries a claimRef and Kubernetes' binder binds the pair, then
 * marks the PV Released when the claim goes.
 */
public final class ClaimController implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ClaimController.class);

  private final ClusterCache cache;
  private final Provisioner provisioner;
  private final EventRecorder events;
  private final RetryPolicy retry;
  private final int workers;
  private final Duration resync;
  // Claims take turns by namespace; PVs, which only admins make, share one line.
  private final WorkQueue<WorkKey> queue =
      new WorkQueue<>(k -> k instanceof WorkKey.Claim c ? c.namespace() : "");
  private final Map<WorkKey, Integer> failures = new ConcurrentHashMap<>();
  private final ProvisionMetrics metrics;
  private final ClaimSync sync;
  private final ScheduledExecutorService notices;

  /**
   * UIDs of claims gone before their PV existed, by claim. Handed to the provisioner under the
   * claim's own key, so that never happens while the same claim is being provisioned.
   */
  private final Map<WorkKey.Claim, Set<String>> abandoned = new ConcurrentHashMap<>();

  private final List<Thread> threads = new ArrayList<>();
  private volatile BiConsumer<WorkKey, HasMetadata> processed = (k, o) -> {};
  private ScheduledExecutorService sweeper;
  private volatile boolean running;

  // Whether this replica acts: only the leader does; a standby keeps its caches warm.
  private volatile boolean active = true;

  /**
   * @param cache the informers' view, shared with the provisioner; started here
   * @param resync how often every key and the housekeeping come again
   * @param registry where the provisioning metrics go
   */
  public ClaimController(
      KubernetesClient client,
      ClusterCache cache,
      Provisioner provisioner,
      EventRecorder events,
      RetryPolicy retry,
      int workers,
      Duration resync,
      MeterRegistry registry) {
    this.cache = cache;
    this.provisioner = provisioner;
    this.events = events;
    this.retry = retry;
    this.workers = workers;
    this.resync = resync;
    this.metrics = new ProvisionMetrics(registry);
    this.notices =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "provisioning-notices");
              t.setDaemon(true);
              return t;
            });
    this.sync = new ClaimSync(client, cache, provisioner, events, metrics, notices);
    metrics.queue(queue::size);
  }

  /** Starts the informers and the workers. */
  public void start() {
    running = true;
    cache.start(
        handler(
            c -> new WorkKey.Claim(c.getMetadata().getNamespace(), c.getMetadata().getName()),
            this::claimGone),
        handler(
            pv -> new WorkKey.Volume(pv.getMetadata().getName()),
            pv -> {
              sync.forget(pv);
              provisioner.forget(pv);
            }));
    for (int i = 0; i < workers; i++) {
      startWorker(i);
    }
    sweeper =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "housekeeping");
              t.setDaemon(true);
              return t;
            });
    sweeper.execute(this::housekeepingLoop);
    LOG.info("controller started: provisioner {}, {} workers", provisioner.name(), workers);
  }

  /**
   * Stops acting at once: no worker takes another key and no housekeeping runs; the keys in
   * progress finish (every step is safe to repeat by the replica that takes over). The informers go
   * on and keys wait in the queue, so a standby is ready the moment it leads. Before {@link
   * #start}: start as a standby.
   */
  public void pause() {
    if (active) {
      active = false;
      queue.paused(true);
      LOG.info("standing by: no claim or volume is worked on until this replica leads");
    }
  }

  /**
   * Acts again, looking at everything afresh: every claim and PV in the caches is queued and the
   * housekeeping runs, since what the last leader left half-done is known only to the cluster and
   * the storage.
   */
  public void resume() {
    active = true;
    LOG.info("leading: resyncing every claim and volume");
    cache
        .claims()
        .forEach(
            c ->
                queue.add(
                    new WorkKey.Claim(c.getMetadata().getNamespace(), c.getMetadata().getName())));
    cache.volumes().forEach(pv -> queue.add(new WorkKey.Volume(pv.getMetadata().getName())));
    queue.paused(false);
    if (sweeper != null) {
      try {
        sweeper.execute(this::housekeeping);
      } catch (RejectedExecutionException closing) {
        // close() stopped the sweeper
      }
    }
  }

  /** Whether this replica acts (it leads, or no election runs). */
  public boolean active() {
    return active;
  }

  /** Whether the informers have listed everything once: the readiness of the controller. */
  public boolean synced() {
    return running && cache.synced();
  }

  /**
   * Tells {@code listener} of every key worked on, with the object as it was then (null when gone),
   * once the work is done: what tests wait for instead of sleeping.
   */
  void onProcessed(BiConsumer<WorkKey, HasMetadata> listener) {
    this.processed = listener;
  }

  /** Whether {@code key} waits in the queue (a standby holds what arrives). */
  boolean waiting(WorkKey key) {
    return queue.waiting(key);
  }

  /** Whether {@code key} comes back after a delay (a retry, work in background). */
  boolean scheduled(WorkKey key) {
    return queue.scheduled(key);
  }

  private <T extends HasMetadata> ResourceEventHandler<T> handler(
      Function<T, WorkKey> key, java.util.function.Consumer<T> gone) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T obj) {
        queue.add(key.apply(obj));
      }

      @Override
      public void onUpdate(T oldObj, T newObj) {
        queue.add(key.apply(newObj));
      }

      @Override
      public void onDelete(T obj, boolean deletedFinalStateUnknown) {
        failures.remove(key.apply(obj));
        gone.accept(obj);
      }
    };
  }

  /** A claim that goes before its PV exists may have left storage behind. */
  private void claimGone(PersistentVolumeClaim c) {
    provisioner.forget(c);
    if (sync.ours(c) && c.getMetadata().getUid() != null) {
      abandon(
          new Provisioner.Abandoned(
              new WorkKey.Claim(c.getMetadata().getNamespace(), c.getMetadata().getName()),
              c.getMetadata().getUid()));
    }
  }

  private void abandon(Provisioner.Abandoned a) {
    abandoned.computeIfAbsent(a.claim(), k -> ConcurrentHashMap.newKeySet()).add(a.claimUid());
    queue.add(a.claim());
  }

  private void startWorker(int slot) {
    Thread t = new Thread(() -> work(slot), "provision-worker-" + slot);
    synchronized (threads) {
      if (slot < threads.size()) {
        threads.set(slot, t);
      } else {
        threads.add(t);
      }
    }
    t.start();
  }

  /**
   * The workers alive, of those started: what {@code /healthz} reports. A worker that died is
   * replaced at once, so fewer than all means that could not be done.
   */
  public String workersAlive() {
    long alive;
    synchronized (threads) {
      alive = threads.stream().filter(Thread::isAlive).count();
    }
    return alive + " of " + workers + " workers alive (" + metrics.workersReplaced() + " replaced)";
  }

  /** Whether every worker is alive (always, between {@link #start} and {@link #close}). */
  public boolean workersHealthy() {
    synchronized (threads) {
      return !running || threads.stream().allMatch(Thread::isAlive);
    }
  }

  private void work(int slot) {
    try {
      while (running) {
        WorkKey key;
        try {
          key = queue.take();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
        if (key == null) {
          return; // shut down
        }
        HasMetadata about = null;
        // Every log line of this key says which claim or PV (and, once known, volume) it is on.
        MDC.put(key instanceof WorkKey.Claim ? "claim" : "pv", key.toString());
        try {
          about = process(key);
        } finally {
          MDC.clear();
          queue.done(key);
          processed.accept(key, about);
        }
      }
    } catch (OutOfMemoryError e) {
      throw e; // the process' to handle (the images exit on it): no worker to replace
    } catch (Throwable e) {
      // process() keeps a key's failures to the key; what escapes it (a listener, the queue, an
      // Error while an event was told) must not leave the cluster with one worker fewer.
      if (running) {
        LOG.error("worker {} died ({}); starting another", slot, e.toString());
        metrics.workerReplaced();
        startWorker(slot);
      }
    }
  }

  /** Works on one key; returns the object it looked at (null when it is gone). */
  private HasMetadata process(WorkKey key) {
    HasMetadata about = null;
    try {
      boolean again = false;
      if (key instanceof WorkKey.Claim c) {
        PersistentVolumeClaim claim = cache.claim(c.namespace(), c.name());
        about = claim;
        Set<String> gone = abandoned.get(c);
        if (gone != null) {
          for (String uid : List.copyOf(gone)) {
            if (claim == null || !uid.equals(claim.getMetadata().getUid())) {
              provisioner.abandoned(c, uid);
            }
            gone.remove(uid);
          }
          abandoned.remove(c, Set.of());
        }
        again = claim != null && sync.claim(claim);
      } else if (key instanceof WorkKey.Volume v) {
        PersistentVolume pv = cache.volume(v.name());
        about = pv;
        if (pv != null) {
          sync.volume(pv);
        }
      }
      failures.remove(key);
      if (again) {
        queue.addAfter(key, retry.delay(1));
      }
    } catch (ProvisioningException e) {
      failed(key, about, e.getMessage(), e.isFinal(), e.reason());
    } catch (RuntimeException e) {
      LOG.debug("{} failed", key, e);
      failed(key, about, e.toString(), false, null);
    } catch (OutOfMemoryError e) {
      throw e; // the process' to handle (the images exit on it), not one key's
    } catch (Error e) {
      // One hostile object (a StackOverflowError in a parser, a class that fails to link for one
      // code path) fails its own key, retried with backoff, and no other: the worker goes on. Its
      // stack is not logged, so that each such object costs one line.
      LOG.warn("{}: {} while working on it", key, e.toString());
      failed(key, about, "internal error: " + e, false, null);
    }
    return about;
  }

  /** Runs {@link #housekeeping} once the caches are synced, then at every resync. */
  private void housekeepingLoop() {
    if (!running) {
      return;
    }
    boolean ready = synced();
    if (ready && active) {
      housekeeping();
    }
    try {
      sweeper.schedule(
          this::housekeepingLoop,
          ready ? Math.max(1, resync.toMillis()) : 100,
          TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException closing) {
      // close() stopped the sweeper
    }
  }

  private void housekeeping() {
    try {
      provisioner.housekeeping().forEach(this::abandon);
    } catch (RuntimeException e) {
      // The storage is down: the next resync asks again.
      LOG.info("housekeeping failed: {}", e.getMessage());
    }
  }

  /**
   * Counts a failure of the key, tells the object why ({@code reason}, or by default what the key
   * was being worked on for), and retries with backoff or gives up.
   */
  private void failed(
      WorkKey key, HasMetadata about, String message, boolean isFinal, String reason) {
    boolean claim = key instanceof WorkKey.Claim;
    if (reason == null) {
      reason = claim ? EventRecorder.PROVISIONING_FAILED : EventRecorder.VOLUME_FAILED_DELETE;
    }
    int n = failures.merge(key, 1, Integer::sum);
    // Nothing would bring leftovers back once given up (their claim is gone): a leaked volume is
    // worse than a retry every few minutes, so a key with some never gives up.
    Set<String> leftovers = claim ? abandoned.get((WorkKey.Claim) key) : null;
    boolean sweeping = leftovers != null && !leftovers.isEmpty();
    boolean giveUp = !sweeping && (isFinal || retry.exhausted(n));
    metrics.failed(claim ? "claim" : "volume", giveUp);
    if (giveUp) {
      failures.remove(key);
      String note =
          isFinal
              ? message
              : message
                  + " (gave up after "
                  + n
                  + " attempts; will try again at the next change or resync)";
      // A refusal told already (the same at every resync) is logged quietly, as it is not told
      // again: a tenant's thousand refused claims do not flood the log either.
      boolean told = about == null || events.warning(about, reason, note);
      LOG.atLevel(told ? org.slf4j.event.Level.WARN : org.slf4j.event.Level.DEBUG)
          .log("{}: {}", key, note);
      return;
    }
    Duration delay = retry.delay(n);
    boolean told = about == null || events.warning(about, reason, message);
    LOG.atLevel(told ? org.slf4j.event.Level.INFO : org.slf4j.event.Level.DEBUG)
        .log("{}: {}; attempt {} failed, retrying in {}s", key, message, n, delay.toSeconds());
    queue.addAfter(key, delay);
  }

  /** Stops the informers and waits for the workers to finish their current key. */
  @Override
  public void close() {
    running = false;
    if (sweeper != null) {
      sweeper.shutdownNow();
    }
    queue.shutDown();
    notices.shutdownNow();
    cache.close();
    List<Thread> all;
    synchronized (threads) {
      all = List.copyOf(threads);
    }
    for (Thread t : all) {
      try {
        t.join(TimeUnit.SECONDS.toMillis(30));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
