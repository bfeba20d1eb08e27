package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
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
import org.slf4j.event.Level;

/**
 * The engine every loop of the provisioner runs on. Keys (from informer events, resyncs, retries)
 * wait in a {@link WorkQueue} with one line per owner; N workers take them, never one key twice at
 * once, and hand each to the loop's {@link LoopWork}, which says when the key is to be looked at
 * again. A failure is the key's alone: counted, told by the loop, retried with the {@link
 * RetryPolicy} (one retry pending per key) or given up; a 409 is looked at again at once, as the
 * object changed under the write. A worker that dies anyway is replaced and counted. The loop's
 * housekeeping runs on a timer of its own; only a leading replica works on keys.
 *
 * <p>The loops keep only what differs: what a key means and what working on it does.
 *
 * @param <K> the loop's key
 */
public final class Loop<K> {

  private static final Logger LOG = LoggerFactory.getLogger(Loop.class);

  /** How soon a key whose object changed under a write (409) is looked at again. */
  static final Duration CONFLICT_DELAY = Duration.ofMillis(100);

  /**
   * Conflicts after which a key's 409 counts as a failure (with backoff); the count ends when the
   * key is done or makes progress ({@link LoopWork#stepUnderWay}).
   */
  static final int CONFLICTS_BEFORE_BACKOFF = 10;

  private final String name;
  private final int workers;
  private final RetryPolicy retry;
  private final LoopWork<K> work;
  private final LoopMetrics metrics;
  private final WorkQueue<K> queue;
  private final Map<K, Integer> failures = new ConcurrentHashMap<>();
  private final Map<K, Integer> conflicts = new ConcurrentHashMap<>();
  private final Workers threads = new Workers();
  private volatile BiConsumer<K, HasMetadata> processed = (k, o) -> {};
  private ScheduledExecutorService timer;
  private volatile boolean running;
  private volatile boolean active = true;

  /**
   * @param name the loop's name in thread names, logs, metrics and {@code /healthz}
   * @param workers how many keys are worked on at once
   * @param lineOf the owner whose keys share one line of the queue (a namespace)
   * @param metrics the engine's metrics, shared by every loop
   */
  public Loop(
      String name,
      int workers,
      RetryPolicy retry,
      Function<K, String> lineOf,
      LoopWork<K> work,
      LoopMetrics metrics) {
    this.name = name;
    this.workers = workers;
    this.retry = retry;
    this.work = work;
    this.metrics = metrics;
    this.queue = new WorkQueue<>(lineOf);
    metrics.register(name);
  }

  public String name() {
    return name;
  }

  /** Queues {@code key} (what informer events do). */
  public void add(K key) {
    queue.add(key);
  }

  /** Drops the key's delayed look, if one is pending ({@link WorkQueue#unschedule}). */
  public void unschedule(K key) {
    queue.unschedule(key);
  }

  /** The key's object is gone: its failures are forgotten. */
  public void forget(K key) {
    failures.remove(key);
    conflicts.remove(key);
  }

  /** How many keys wait. */
  public int size() {
    return queue.size();
  }

  /** Whether {@code key} waits in the queue. */
  public boolean waiting(K key) {
    return queue.waiting(key);
  }

  /** Whether {@code key} comes back after a delay (a retry, work in background). */
  public boolean scheduled(K key) {
    return queue.scheduled(key);
  }

  /**
   * Tells {@code listener} of every key worked on, with the object as it was then (null when gone),
   * once the work is done: what tests wait for instead of sleeping.
   */
  public void onProcessed(BiConsumer<K, HasMetadata> listener) {
    this.processed = listener;
  }

  /** Starts the workers and the housekeeping (a paused loop starts as a standby). */
  public void start() {
    running = true;
    queue.paused(!active);
    for (int i = 0; i < workers; i++) {
      startWorker(i);
    }
    timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, name + "-housekeeping");
              t.setDaemon(true);
              return t;
            });
    timer.execute(this::housekeepingLoop);
  }

  /** Stops handing out keys; the keys in progress finish (every step is safe to repeat). */
  public void pause() {
    active = false;
    queue.paused(true);
  }

  /**
   * Acts again, looking at everything afresh (what the last leader left half-done is known only to
   * the cluster and the storage): every key is queued and the housekeeping runs.
   */
  public void resume() {
    active = true;
    try {
      work.everything().forEach(queue::add);
    } finally {
      queue.paused(false);
      if (timer != null) {
        try {
          timer.execute(() -> housekeeping(true));
        } catch (RejectedExecutionException closing) {
          // close() stopped the timer
        }
      }
    }
  }

  /** Whether this replica acts on the loop's keys. */
  public boolean active() {
    return active;
  }

  /** Whether every worker is alive (always, between {@link #start} and {@link #close}). */
  public boolean healthy() {
    return !running || threads.allAlive();
  }

  /** The workers alive, of those started, and how many were replaced: {@code /healthz}'s words. */
  public String workersAlive() {
    return threads.alive()
        + " of "
        + workers
        + " workers alive ("
        + metrics.workersReplaced(name)
        + " replaced)";
  }

  private void startWorker(int slot) {
    threads.start(slot, new Thread(() -> serve(slot), name + "-worker-" + slot));
  }

  private void serve(int slot) {
    try {
      while (running) {
        K key;
        try {
          key = queue.take();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
        if (key == null) {
          return; // shut down
        }
        HasMetadata[] about = {null};
        long started = System.nanoTime();
        try {
          attempt(key, about);
        } finally {
          MDC.clear();
          queue.done(key);
          metrics.held(name, System.nanoTime() - started);
          processed.accept(key, about[0]);
        }
      }
    } catch (OutOfMemoryError e) {
      throw e; // the process' to handle (the images exit on it): no worker to replace
    } catch (Throwable e) {
      // attempt() keeps a key's failures to the key; what escapes it (a listener, the queue, an
      // Error while a failure was told) must not leave the cluster with one worker fewer.
      if (running) {
        LOG.error("{} worker {} died ({}); starting another", name, slot, e.toString());
        metrics.workerReplaced(name);
        startWorker(slot);
      }
    }
  }

  /** Works on one key; {@code about} gets the object looked up. Every failure stays the key's. */
  private void attempt(K key, HasMetadata[] about) {
    try {
      // Every log line of this key says which object (and, once known, volume) it is on.
      MDC.put(work.logLabel(key), key.toString());
      about[0] = work.lookUp(key);
      Optional<Duration> again = work.work(key, about[0]);
      if (again.isPresent()) {
        // Under way, not done: the key's failures so far still count, so work that fails after
        // each step of progress (a volume made, then its export failing) backs off and gives up
        // as any other instead of starting over at every step. Progress ends a run of conflicts;
        // a look that only started a step off the workers is none, or a step that meets a 409
        // each time would be asked again every CONFLICT_DELAY for good.
        if (!work.stepUnderWay(key)) {
          conflicts.remove(key);
        }
        queue.addAfter(key, again.get());
      } else {
        failures.remove(key);
        conflicts.remove(key);
      }
    } catch (ProvisioningException e) {
      failed(key, about[0], e.getMessage(), e.isFinal(), e.reason());
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409 && conflicts.merge(key, 1, Integer::sum) < CONFLICTS_BEFORE_BACKOFF) {
        // Changed since it was read: read again soon, no failure. Only a key changed under every
        // write for long (another client fighting over it) backs off like a failure.
        LOG.debug("{}: changed meanwhile, looking again", key);
        queue.addAfter(key, CONFLICT_DELAY);
      } else {
        LOG.debug("{} failed", key, e);
        failed(key, about[0], e.toString(), false, null);
      }
    } catch (RuntimeException e) {
      LOG.debug("{} failed", key, e);
      failed(key, about[0], e.toString(), false, null);
    } catch (OutOfMemoryError e) {
      throw e; // the process' to handle (the images exit on it), not one key's
    } catch (Error e) {
      // One hostile object (a StackOverflowError in a parser, a class that fails to link for one
      // code path) fails its own key, retried with backoff, and no other: the worker goes on. Its
      // stack is not logged, so that each such object costs one line.
      LOG.warn("{}: {} while working on it", key, e.toString());
      failed(key, about[0], "internal error: " + e, false, null);
    }
  }

  /** Counts a failure of the key, has the loop tell it, and retries with backoff or gives up. */
  private void failed(K key, HasMetadata about, String message, boolean isFinal, String reason) {
    int n = failures.merge(key, 1, Integer::sum);
    // A key that keeps trying (leftovers nothing else would bring back) never gives up: a leaked
    // volume is worse than a retry every few minutes.
    boolean giveUp = !work.keepsTrying(key) && (isFinal || retry.exhausted(n));
    KeyFailure f =
        new KeyFailure(
            reason == null ? work.failureReason(key) : reason, message, n, isFinal, giveUp);
    boolean told = tell(key, about, f);
    if (giveUp) {
      failures.remove(key);
      conflicts.remove(key);
      // A refusal told already (the same at every resync) is logged quietly, as it is not told
      // again: a tenant's thousand refused claims do not flood the log either.
      LOG.atLevel(told ? Level.WARN : Level.DEBUG).log("{}: {}", key, f.note());
      return;
    }
    Duration delay = retry.delay(n);
    LOG.atLevel(told ? Level.INFO : Level.DEBUG)
        .log("{}: {}; attempt {} failed, retrying in {}s", key, message, n, delay.toSeconds());
    queue.addAfter(key, delay);
  }

  /** Has the loop tell a failure; one that cannot be told is still retried (or given up). */
  private boolean tell(K key, HasMetadata about, KeyFailure f) {
    try {
      return work.tell(key, about, f);
    } catch (OutOfMemoryError e) {
      throw e;
    } catch (Throwable e) {
      LOG.info("{}: could not tell its failure: {}", key, e.toString());
      return false;
    }
  }

  private void housekeepingLoop() {
    if (!running) {
      return;
    }
    Duration next = Duration.ofMinutes(1);
    try {
      next = housekeeping(active);
    } finally {
      // Whatever it threw, the housekeeping comes again: a chain that ended would stop the sweeps
      // for good, unseen by /healthz.
      try {
        timer.schedule(this::housekeepingLoop, Math.max(1, next.toMillis()), TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException closing) {
        // close() stopped the timer
      }
    }
  }

  private Duration housekeeping(boolean leading) {
    try {
      return work.housekeeping(leading && active);
    } catch (OutOfMemoryError e) {
      throw e;
    } catch (Throwable e) {
      // The storage or the API is down, or one object broke the sweep: the next round asks again.
      LOG.info("{} housekeeping failed: {}", name, e.toString());
      return Duration.ofMinutes(1);
    }
  }

  /** Stops handing out keys and the housekeeping; waits for the workers to finish their key. */
  public void close() {
    close(Deadline.after(Engine.STOP_GRACE));
  }

  /**
   * Stops handing out keys and the housekeeping; waits, until {@code by}, for the workers to finish
   * their key. A worker still at it then is interrupted (its API or Cinder call ends at once) and
   * given {@link Workers#INTERRUPTED_GRACE}.
   *
   * @return how many workers still run after that (0 unless one ignores interrupts): the caller
   *     must then not hand the lead on, as they may still act
   */
  public int close(Deadline by) {
    running = false;
    if (timer != null) {
      timer.shutdownNow();
    }
    queue.shutDown();
    int left = threads.stop(by);
    if (left > 0) {
      LOG.warn("{}: {} worker(s) still at their key after the stop and an interrupt", name, left);
    }
    return left;
  }
}
