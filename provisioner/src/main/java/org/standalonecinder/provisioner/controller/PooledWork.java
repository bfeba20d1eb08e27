package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.function.BiPredicate;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * A loop's work with each key's step run off the loop's workers: the step is a call of its own
 * ({@link Calls}) on a {@link FairPool}, in the line of the key's namespace. A worker starts it and
 * goes on; the call's end brings the key back, and that look takes the step's outcome (when to look
 * again, or what it threw) as if the worker had done the step itself.
 *
 * <p>An outcome is taken only for the object as it was when the step was asked for (its uid and
 * {@code resourceVersion}): a change while the step ran (a deletion asked, a class or a status
 * written) brings the key back, and the step is done again for the object as it is then, since what
 * the earlier step decided may not hold for it. Every step reads what it needs from the storage
 * first, so doing one again costs a few reads. A step's own write changes the version too, so a
 * step that writes is done once more, and writes nothing then.
 *
 * <p>What the steps do not see is done on the worker, as before: a key whose object is gone (its
 * waiting step is cancelled), and the loop's telling and housekeeping.
 *
 * @param <K> the loop's keys
 */
public final class PooledWork<K> implements LoopWork<K> {

  private final LoopWork<K> inner;
  private final Calls<Optional<Duration>> calls;
  private final FairPool pool;
  private final BiPredicate<K, HasMetadata> slow;
  private final Function<K, String> line;
  private final Consumer<K> again;
  private final Consumer<K> unschedule;

  /**
   * @param inner what the loop does with a key
   * @param pool where the steps run
   * @param slow whether a key's step calls the storage (runs on the pool); the others' steps only
   *     read caches and write to the API server, and run on the worker
   * @param line the pool's line of a key (its namespace)
   * @param again brings a key back to the loop (a step's end)
   * @param unschedule drops a key's delayed look ({@link Loop#unschedule}): the look that takes an
   *     outcome decides anew when the key comes back, so the look that started the step leaves none
   *     behind
   */
  public PooledWork(
      LoopWork<K> inner,
      FairPool pool,
      BiPredicate<K, HasMetadata> slow,
      Function<K, String> line,
      Consumer<K> again,
      Consumer<K> unschedule,
      Clock clock) {
    this.inner = inner;
    this.pool = pool;
    this.calls = new Calls<>(pool, clock);
    this.slow = slow;
    this.line = line;
    this.again = again;
    this.unschedule = unschedule;
  }

  @Override
  public HasMetadata lookUp(K key) {
    return inner.lookUp(key);
  }

  @Override
  public Optional<Duration> work(K key, HasMetadata object) {
    String id = String.valueOf(key);
    if (object == null) {
      calls.cancel(id);
      return inner.work(key, null);
    }
    Optional<Calls.Call<Optional<Duration>>> known = calls.get(id);
    if (known.isEmpty() && !slow.test(key, object)) {
      return inner.work(key, object);
    }
    String asked = version(object);
    if (known.isPresent()) {
      Calls.Call<Optional<Duration>> call = known.get();
      if (!call.ended()) {
        if (call.tag().equals(asked) || calls.cancel(id)) {
          return Optional.of(Pace.LONGEST_LOOK); // its end brings the key back sooner
        }
        // Waiting still, for an older version of the object: asked anew below, for this one.
      } else if (!call.stale() && (call.tag().equals(asked) || call.failed())) {
        // A failure is taken whatever the version: told, counted and backed off from. What
        // changed the object brought the key back already, and the look after this one steps
        // anew; a failure discarded instead would never be told, and a step that fails after
        // writing the object would loop unseen.
        unschedule.accept(key);
        return calls.take(call);
      } else {
        calls.discard(call);
      }
      if (!slow.test(key, object)) {
        return inner.work(key, object);
      }
    }
    Calls.Call<Optional<Duration>> call =
        calls.start(id, line.apply(key), id, asked, () -> inner.work(key, object), failure -> {});
    if (call.ended()) {
      // The pool ran it at once (an inline pool, or a replica that stands by).
      return call.stale() ? discarded(call) : calls.take(call);
    }
    call.end().whenComplete((outcome, failure) -> again.accept(key));
    return Optional.of(Pace.LONGEST_LOOK);
  }

  private Optional<Duration> discarded(Calls.Call<Optional<Duration>> call) {
    calls.discard(call);
    return Optional.empty();
  }

  /** What a step was asked for: this object, at this version. */
  static String version(HasMetadata object) {
    return object.getMetadata().getUid() + "/" + object.getMetadata().getResourceVersion();
  }

  /**
   * This replica stopped acting: steps not yet running never run, and the outcome of one that runs
   * is never taken ({@link Calls#drop}); until {@link #act}, a step asked for is born stale.
   */
  public void standBy() {
    pool.standBy(); // first: what it refuses from now on ends stale (Calls.start)
    calls.drop(new ProvisioningException("this replica stopped leading", false, null));
  }

  /** This replica acts again. */
  public void act() {
    pool.act();
  }

  /** A step of the key waits, runs, or has ended with its outcome not yet taken. */
  @Override
  public boolean stepUnderWay(K key) {
    return calls.get(String.valueOf(key)).isPresent();
  }

  @Override
  public boolean tell(K key, HasMetadata object, KeyFailure failure) {
    return inner.tell(key, object, failure);
  }

  @Override
  public String failureReason(K key) {
    return inner.failureReason(key);
  }

  @Override
  public boolean keepsTrying(K key) {
    return inner.keepsTrying(key);
  }

  @Override
  public Stream<K> everything() {
    return inner.everything();
  }

  @Override
  public Duration housekeeping(boolean leading) {
    return inner.housekeeping(leading);
  }

  @Override
  public String logLabel(K key) {
    return inner.logLabel(key);
  }
}
