package org.standalonecinder.provisioner.provision;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.slf4j.MDC;
import org.standalonecinder.provisioner.cinder.CinderExport;
import org.standalonecinder.provisioner.cinder.Rollback;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.controller.Pace;
import org.standalonecinder.provisioner.controller.ProvisionResult;

/**
 * Claims' volumes being exported to the cluster off the claim loop's workers. Cinder's export (an
 * attachment with the cluster's connector, then its completion) makes a target on the backend and
 * took 4 s a claim on the lab's Cinder while it copied for other claims: a worker that waited for
 * it was a worker no other namespace's claim, release or growth could have.
 *
 * <p>So a worker starts the export and goes on; the claim's next look, which the export's end
 * brings about at once (its {@link ProvisionResult.Progress#wake}), takes the outcome and makes the
 * PV. A failed export has run the attempt's rollback (export, then volume) before it is told. What
 * survives a restart is Cinder's record, as before: the next process finds the volume exported and
 * takes the path of an attempt cut short. An outcome nobody takes (the claim went) is forgotten
 * after {@link Pace#FORGOTTEN_AFTER}; the claim's orphans are deleted by its own path.
 */
final class Exporting {

  /** What a finished export hands to the claim's next look. */
  record Exported(Volume volume, CinderExport.Exported export, Rollback rollback) {}

  private record Job(String volumeId, Instant started, CompletableFuture<Exported> done) {}

  private final Executor pool;
  private final int threads;
  private final Clock clock;
  private final Map<String, Job> jobs = new ConcurrentHashMap<>();

  /** Exports started and not yet running, by namespace; namespaces in the order of their turns. */
  private final Map<String, Deque<Runnable>> waiting = new LinkedHashMap<>();

  /** Exports running, by namespace. */
  private final Map<String, Integer> running = new HashMap<>();

  private int runningTotal;

  /**
   * @param pool where exports run; {@code Runnable::run} runs each on the worker that asks for it,
   *     as before (for tests that want the whole provisioning in one call)
   * @param threads how many exports run at once; one namespace's take at most half of them (at
   *     least one), and namespaces take turns, so another namespace's export never waits behind a
   *     namespace's hundred
   */
  Exporting(Executor pool, int threads, Clock clock) {
    this.pool = pool;
    this.threads = threads;
    this.clock = clock;
  }

  /** Exports on the worker that asks, in one call. */
  static Exporting inline() {
    return new Exporting(Runnable::run, Integer.MAX_VALUE, Clock.systemUTC());
  }

  /**
   * Exports on {@code threads} threads of their own (idle ones end after a minute). Exports past
   * them wait for their namespace's turn.
   */
  static Exporting onThreads(int threads) {
    AtomicInteger n = new AtomicInteger();
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            threads,
            threads,
            1,
            TimeUnit.MINUTES,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t = new Thread(r, "claims-export-" + n.getAndIncrement());
              t.setDaemon(true);
              return t;
            });
    pool.allowCoreThreadTimeOut(true);
    return new Exporting(pool, threads, Clock.systemUTC());
  }

  /**
   * The claim's export, when one was started and has ended: taken, so it is handed over once.
   *
   * @return empty when no export of the claim is known
   * @throws StillMaking while it runs
   * @throws RuntimeException what the export threw, its rollback already run
   */
  Optional<Exported> finished(String claimUid) {
    Job job = jobs.get(claimUid);
    if (job == null) {
      return Optional.empty();
    }
    if (!job.done().isDone()) {
      throw still(job);
    }
    jobs.remove(claimUid, job);
    try {
      return Optional.of(job.done().join());
    } catch (CompletionException e) {
      if (e.getCause() instanceof Error err) {
        throw err;
      }
      throw (RuntimeException) e.getCause();
    }
  }

  /**
   * Starts exporting the claim's {@code volume}. The export's undo joins {@code rollback}, which
   * from now on belongs to the export: when it fails the export runs it, and when it ends the
   * rollback is handed over with the outcome.
   *
   * @param export what exports, given the rollback
   * @return the outcome, when the pool ran the export at once
   * @throws StillMaking while it runs (the claim is woken when it ends)
   */
  Exported start(
      String claimUid,
      String namespace,
      Volume volume,
      Rollback rollback,
      Function<Rollback, CinderExport.Exported> export) {
    Instant now = clock.instant();
    jobs.values()
        .removeIf(j -> j.done().isDone() && j.started().isBefore(now.minus(Pace.FORGOTTEN_AFTER)));
    Job job = new Job(volume.id(), now, new CompletableFuture<>());
    jobs.put(claimUid, job);
    Map<String, String> mdc = MDC.getCopyOfContextMap();
    submit(
        namespace,
        () -> {
          if (jobs.get(claimUid) != job) {
            // Forgotten before its turn: the claim went, and its volume goes by the claim's path.
            job.done().cancel(false);
            return;
          }
          // The claim's log lines name it on this thread as on a worker (which an inline pool is).
          Map<String, String> before = MDC.getCopyOfContextMap();
          MDC.setContextMap(mdc == null ? Map.of() : mdc);
          try {
            run(job, volume, rollback, export);
          } finally {
            MDC.setContextMap(before == null ? Map.of() : before);
          }
        });
    return finished(claimUid).orElseThrow();
  }

  private void submit(String namespace, Runnable export) {
    synchronized (this) {
      waiting.computeIfAbsent(namespace, ns -> new ArrayDeque<>()).add(export);
    }
    startWhatMay();
  }

  /**
   * Starts what may start, outside the lock (an inline pool runs the export right here): namespaces
   * in turn, each up to its share of the threads.
   */
  private void startWhatMay() {
    for (Runnable r : mayStart()) {
      pool.execute(r);
    }
  }

  private synchronized List<Runnable> mayStart() {
    int share = Math.max(1, threads / 2);
    List<Runnable> starting = new ArrayList<>();
    boolean started = true;
    while (started && runningTotal < threads) {
      started = false;
      for (String ns : List.copyOf(waiting.keySet())) {
        if (runningTotal >= threads || running.getOrDefault(ns, 0) >= share) {
          continue;
        }
        Deque<Runnable> line = waiting.remove(ns);
        Runnable next = line.poll();
        if (!line.isEmpty()) {
          waiting.put(ns, line); // its next turn comes after the others'
        }
        running.merge(ns, 1, Integer::sum);
        runningTotal++;
        started = true;
        starting.add(
            () -> {
              try {
                next.run();
              } finally {
                ended(ns);
              }
            });
      }
    }
    return starting;
  }

  private void ended(String namespace) {
    synchronized (this) {
      running.computeIfPresent(namespace, (ns, n) -> n == 1 ? null : n - 1);
      runningTotal--;
    }
    startWhatMay();
  }

  /** Whether an export of the claim was started and its outcome not yet taken. */
  boolean has(String claimUid) {
    return jobs.containsKey(claimUid);
  }

  /** Forgets the claim's export: the claim is gone, and what it left is deleted by its own path. */
  void forget(String claimUid) {
    jobs.remove(claimUid);
  }

  private static void run(
      Job job, Volume volume, Rollback rollback, Function<Rollback, CinderExport.Exported> export) {
    try {
      job.done().complete(new Exported(volume, export.apply(rollback), rollback));
    } catch (RuntimeException e) {
      rollback.run(e);
      job.done().completeExceptionally(e);
    } catch (Error e) {
      job.done().completeExceptionally(e);
    }
  }

  private StillMaking still(Job job) {
    Duration soFar = Duration.between(job.started(), clock.instant());
    return new StillMaking(
        job.volumeId(),
        "Cinder is exporting volume "
            + job.volumeId()
            + " to the cluster (an attachment for the cluster's connector); "
            + Pace.soFar(soFar),
        new ProvisionResult.Progress(soFar, Pace.LONGEST_LOOK, job.done()));
  }
}
