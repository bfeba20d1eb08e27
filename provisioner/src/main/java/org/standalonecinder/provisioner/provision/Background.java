package org.standalonecinder.provisioner.provision;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.MDC;
import org.standalonecinder.provisioner.controller.FairPool;
import org.standalonecinder.provisioner.controller.Pace;
import org.standalonecinder.provisioner.controller.ProvisionResult;
import org.standalonecinder.provisioner.controller.ProvisioningException;

/**
 * One kind of Cinder call that a claim's look starts and does not wait for (a create, an export):
 * at most one per claim, run on a {@link FairPool} (namespaces in turn), its outcome kept until the
 * claim's next look takes it. The look that starts one is told {@link StillMaking} with a wake that
 * the call's end completes, so the claim is looked at again at once; a look while it waits or runs
 * asks Cinder nothing.
 *
 * <p>A replica that stops leading drops what it has not started and what it has not taken ({@link
 * #drop}): the next leader finds the claim's storage as Cinder has it, as after a restart. An
 * outcome nobody takes (the claim went) is forgotten {@link Pace#FORGOTTEN_AFTER} after it ended.
 *
 * @param <T> what the call answers
 */
final class Background<T> {

  /**
   * What a claim is told while its call waits for its turn or runs: formats whose {@code %s} is the
   * call's subject (a volume id, a PV name).
   */
  record Words(String waiting, String running) {}

  private static final class Job<T> {
    final String subject;
    final Instant queued;
    final CompletableFuture<T> done = new CompletableFuture<>();
    volatile boolean began;
    volatile Instant ended;

    Job(String subject, Instant queued) {
      this.subject = subject;
      this.queued = queued;
    }
  }

  private final FairPool pool;
  private final Clock clock;
  private final Words words;
  private final Map<String, Job<T>> jobs = new ConcurrentHashMap<>();

  Background(FairPool pool, Clock clock, Words words) {
    this.pool = pool;
    this.clock = clock;
    this.words = words;
  }

  /**
   * The claim's call, when one was started and has ended: taken, so it is handed over once.
   *
   * @return empty when no call of the claim is known
   * @throws StillMaking while it waits or runs (with no wake: the look that started it has one)
   * @throws RuntimeException what the call threw, after its {@code failed} ran
   */
  Optional<T> finished(String claimUid) {
    Job<T> job = jobs.get(claimUid);
    if (job == null) {
      return Optional.empty();
    }
    if (!job.done.isDone()) {
      throw still(job, null);
    }
    jobs.remove(claimUid, job);
    return Optional.of(take(job));
  }

  /** The answer of a call that has ended, or what it threw. */
  private T take(Job<T> job) {
    try {
      return job.done.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof Error err) {
        throw err;
      }
      throw (RuntimeException) e.getCause();
    }
  }

  /**
   * Starts the claim's call.
   *
   * @param namespace the claim's namespace: its line in the pool
   * @param subject what the claim is told the call is about
   * @param call the call
   * @param failed runs where the call failed with an exception, before the failure is told (an
   *     undo); not when the call never ran
   * @return the answer, when the pool ran the call at once
   * @throws StillMaking while it waits or runs, with the wake its end completes
   */
  T start(
      String claimUid,
      String namespace,
      String subject,
      Supplier<T> call,
      Consumer<RuntimeException> failed) {
    Instant now = clock.instant();
    Instant forgotten = now.minus(Pace.FORGOTTEN_AFTER);
    jobs.values().removeIf(j -> j.ended != null && j.ended.isBefore(forgotten));
    Job<T> job = new Job<>(subject, now);
    jobs.put(claimUid, job);
    Map<String, String> mdc = MDC.getCopyOfContextMap();
    pool.submit(
        namespace,
        () -> {
          if (jobs.get(claimUid) != job) {
            // Forgotten before its turn: the claim went, and what it left goes by its own path.
            end(job, null, new ProvisioningException("the claim went", false, null));
            return;
          }
          // The claim's log lines name it on this thread as on a worker (which an inline pool is).
          Map<String, String> before = MDC.getCopyOfContextMap();
          MDC.setContextMap(mdc == null ? Map.of() : mdc);
          try {
            run(job, call, failed);
          } finally {
            MDC.setContextMap(before == null ? Map.of() : before);
          }
        },
        refused -> end(job, null, refused)); // never ran: nothing to undo
    if (job.done.isDone()) {
      jobs.remove(claimUid, job); // taken here (drop may have cleared it meanwhile)
      return take(job);
    }
    throw still(job, job.done);
  }

  /** Whether a call of the claim was started and its outcome not yet taken. */
  boolean has(String claimUid) {
    return jobs.containsKey(claimUid);
  }

  /** Forgets the claim's call: the claim is gone, and what it left is deleted by its own path. */
  void forget(String claimUid) {
    jobs.remove(claimUid);
  }

  /**
   * This replica stopped acting: calls not yet running never run, and no outcome is taken from now
   * on (the next leader, or this replica leading again, finds the storage as Cinder has it).
   */
  void drop() {
    jobs.clear();
    pool.dropWaiting(new ProvisioningException("this replica stopped leading", false, null));
  }

  private void run(Job<T> job, Supplier<T> call, Consumer<RuntimeException> failed) {
    job.began = true;
    try {
      end(job, call.get(), null);
    } catch (RuntimeException e) {
      failed.accept(e);
      end(job, null, e);
    } catch (Error e) {
      end(job, null, e);
    }
  }

  private void end(Job<T> job, T outcome, Throwable failure) {
    job.ended = clock.instant();
    if (failure == null) {
      job.done.complete(outcome);
    } else {
      job.done.completeExceptionally(failure);
    }
  }

  private StillMaking still(Job<T> job, CompletableFuture<?> wake) {
    Duration soFar = Duration.between(job.queued, clock.instant());
    String what = (job.began ? words.running() : words.waiting()).formatted(job.subject);
    return new StillMaking(
        null,
        what + "; " + Pace.soFar(soFar),
        new ProvisionResult.Progress(soFar, Pace.LONGEST_LOOK, wake));
  }
}
