package org.standalonecinder.provisioner.controller;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.MDC;

/**
 * Calls that a key's look starts and does not wait for: at most one per key, run on a {@link
 * FairPool} (lines in turn), its outcome kept until a later look of the key takes it. What the
 * loops build on so that no worker waits for the storage: the worker starts the call, goes on, and
 * is brought back by the call's end.
 *
 * <p>A call not yet begun can be cancelled (the key's object went); one that runs cannot, and
 * whoever cleans up after the key waits for its end ({@link #cancel}). A replica that stops leading
 * drops what it has not started, and what runs then ends unseen ({@link #drop}): the next leader
 * finds the storage as it is, as after a restart. An outcome nobody takes is forgotten {@link
 * Pace#FORGOTTEN_AFTER} after it ended.
 *
 * @param <T> what a call answers
 */
public final class Calls<T> {

  private enum State {
    QUEUED,
    RUNNING,
    CANCELLED
  }

  /** A key's call, as a look finds it. */
  public static final class Call<T> {
    private final String key;
    private final String subject;
    private final String tag;
    private final Instant queued;
    private final CompletableFuture<T> done = new CompletableFuture<>();
    private final AtomicReference<State> state = new AtomicReference<>(State.QUEUED);
    private volatile boolean stale;
    private volatile Instant ended;

    private Call(String key, String subject, String tag, Instant queued) {
      this.key = key;
      this.subject = subject;
      this.tag = tag;
      this.queued = queued;
    }

    /** What the call is about, as its key's object is told (a volume id, a PV name). */
    public String subject() {
      return subject;
    }

    /**
     * What the starter said the call was for (e.g. the version of the object it was asked for): a
     * look that wants another thing discards it.
     */
    public String tag() {
      return tag;
    }

    /** Whether it has ended (then {@link Calls#take} hands its outcome over). */
    public boolean ended() {
      return done.isDone();
    }

    /** Whether it has ended by throwing. */
    public boolean failed() {
      return done.isCompletedExceptionally();
    }

    /** Whether it runs (else it waits for its turn, or has ended). */
    public boolean running() {
      return state.get() == State.RUNNING && !done.isDone();
    }

    /** Whether its outcome is to be ignored: this replica stopped leading while it ran. */
    public boolean stale() {
      return stale;
    }

    /** Its end, normal or not: what a look that waits for it is woken by. */
    public CompletableFuture<?> end() {
      return done;
    }

    /** How long since it was asked for. */
    public Duration soFar(Clock clock) {
      return Duration.between(queued, clock.instant());
    }
  }

  private final FairPool pool;
  private final Clock clock;
  private final Map<String, Call<T>> calls = new ConcurrentHashMap<>();

  public Calls(FairPool pool, Clock clock) {
    this.pool = pool;
    this.clock = clock;
  }

  /** The key's call, when one is known (waiting, running, or ended and not taken). */
  public Optional<Call<T>> get(String key) {
    return Optional.ofNullable(calls.get(key));
  }

  /**
   * Takes an ended call's outcome: handed over once, the call forgotten.
   *
   * @throws RuntimeException what the call threw (an {@link Error} as it was)
   */
  public T take(Call<T> call) {
    calls.remove(call.key, call);
    try {
      return call.done.join();
    } catch (CompletionException e) {
      if (e.getCause() instanceof Error err) {
        throw err;
      }
      throw (RuntimeException) e.getCause();
    }
  }

  /** Forgets an ended call without its outcome (a stale one, or one for another thing). */
  public void discard(Call<T> call) {
    calls.remove(call.key, call);
  }

  /**
   * Starts the key's call, in place of any it had.
   *
   * @param line the pool's line it waits in (a namespace)
   * @param subject what the key's object is told the call is about
   * @param tag what the call is for ({@link Call#tag})
   * @param call the call
   * @param failed runs where the call threw an exception, before a look sees it (an undo); not when
   *     it never ran
   * @return the call: ended already when the pool ran it at once
   */
  public Call<T> start(
      String key,
      String line,
      String subject,
      String tag,
      Supplier<T> call,
      Consumer<RuntimeException> failed) {
    Instant now = clock.instant();
    Instant forgotten = now.minus(Pace.FORGOTTEN_AFTER);
    calls.values().removeIf(c -> c.ended != null && c.ended.isBefore(forgotten));
    Call<T> c = new Call<>(key, subject, tag, now);
    calls.put(key, c);
    if (pool.standingBy()) {
      // Never run, and never taken: the look after this replica leads again asks anew.
      c.stale = true;
      c.state.set(State.CANCELLED);
      end(c, null, new ProvisioningException("this replica stopped leading", false, null));
      return c;
    }
    Map<String, String> mdc = MDC.getCopyOfContextMap();
    pool.submit(
        line,
        () -> {
          if (!c.state.compareAndSet(State.QUEUED, State.RUNNING)) {
            end(c, null, new ProvisioningException("cancelled before its turn", false, null));
            return;
          }
          // The key's log lines name it on this thread as on a worker (which an inline pool is).
          Map<String, String> before = MDC.getCopyOfContextMap();
          MDC.setContextMap(mdc == null ? Map.of() : mdc);
          try {
            run(c, call, failed);
          } finally {
            MDC.setContextMap(before == null ? Map.of() : before);
          }
        },
        refused -> {
          // Never ran: nothing to undo. Refused because this replica stopped leading: stale, so
          // that no look tells it as the key's failure.
          if (pool.standingBy()) {
            c.stale = true;
          }
          end(c, null, refused);
        });
    return c;
  }

  /**
   * The key's object is gone: its call is cancelled if it has not begun, and forgotten once it has
   * ended.
   *
   * @return whether its call runs: what it makes exists only once it ends, so whoever cleans up
   *     after the key looks after that
   */
  public boolean cancel(String key) {
    Call<T> c = calls.get(key);
    if (c == null) {
      return false;
    }
    if (c.done.isDone()
        || c.state.get() == State.CANCELLED
        || c.state.compareAndSet(State.QUEUED, State.CANCELLED)) {
      calls.remove(key, c);
      return false;
    }
    return true;
  }

  /**
   * This replica stopped acting: calls not yet running never run, ended ones are forgotten, and a
   * running one is kept, marked stale, until it ends, so that this replica, should it lead again,
   * does not ask for the same thing twice meanwhile.
   */
  public void drop(RuntimeException why) {
    calls
        .values()
        .removeIf(
            c -> {
              if (c.state.compareAndSet(State.QUEUED, State.CANCELLED) || c.done.isDone()) {
                return true;
              }
              c.stale = true;
              return false;
            });
    pool.dropWaiting(why);
  }

  private void run(Call<T> c, Supplier<T> call, Consumer<RuntimeException> failed) {
    T outcome = null;
    Throwable failure = null;
    try {
      outcome = call.get();
    } catch (RuntimeException e) {
      failure = e;
      try {
        failed.accept(e);
      } catch (Throwable undo) {
        e.addSuppressed(undo); // told with the failure
      }
    } catch (Throwable e) {
      failure = e;
    } finally {
      // Whatever happened, the call ends: a look waiting for it would otherwise wait for good.
      end(c, outcome, failure);
    }
  }

  private void end(Call<T> c, T outcome, Throwable failure) {
    c.ended = clock.instant();
    if (failure == null) {
      c.done.complete(outcome);
    } else {
      c.done.completeExceptionally(failure);
    }
  }
}
