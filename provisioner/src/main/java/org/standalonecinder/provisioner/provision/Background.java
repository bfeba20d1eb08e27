package org.standalonecinder.provisioner.provision;

import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.standalonecinder.provisioner.controller.Calls;
import org.standalonecinder.provisioner.controller.FairPool;
import org.standalonecinder.provisioner.controller.Pace;
import org.standalonecinder.provisioner.controller.ProvisionResult;
import org.standalonecinder.provisioner.controller.ProvisioningException;

/**
 * One kind of Cinder call that a claim's look starts and does not wait for (an export): at most one
 * per claim ({@link Calls}), its outcome kept until the claim's next look takes it. The look that
 * starts one is told {@link StillMaking} with a wake that the call's end completes, so the claim is
 * looked at again at once; a look while it waits or runs asks Cinder nothing.
 *
 * @param <T> what the call answers
 */
final class Background<T> {

  /**
   * What a claim is told while its call waits for its turn or runs: formats whose {@code %s} is the
   * call's subject (a volume id, a PV name).
   */
  record Words(String waiting, String running) {}

  private final Calls<T> calls;
  private final Clock clock;
  private final Words words;

  Background(FairPool pool, Clock clock, Words words) {
    this.calls = new Calls<>(pool, clock);
    this.clock = clock;
    this.words = words;
  }

  /**
   * The claim's call, when one was started and has ended: taken, so it is handed over once.
   *
   * @return empty when no call of the claim is known, or its outcome is not to be taken (this
   *     replica stopped leading while it ran: what it did is found in Cinder, as by another leader)
   * @throws StillMaking while it waits or runs (with no wake: the look that started it has one, but
   *     a stale call's look has none)
   * @throws RuntimeException what the call threw, after its {@code failed} ran
   */
  Optional<T> finished(String claimUid) {
    Calls.Call<T> call = calls.get(claimUid).orElse(null);
    if (call == null) {
      return Optional.empty();
    }
    if (!call.ended()) {
      throw still(call, call.stale() ? call.end() : null);
    }
    if (call.stale()) {
      calls.discard(call);
      return Optional.empty();
    }
    return Optional.of(calls.take(call));
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
    Calls.Call<T> started = calls.start(claimUid, namespace, subject, "", call, failed);
    if (started.stale()) {
      throw still(started, null); // this replica stands by: never run, asked anew once it leads
    }
    if (started.ended()) {
      return calls.take(started);
    }
    throw still(started, started.end());
  }

  /** Whether a call of the claim was started and its outcome not yet taken. */
  boolean has(String claimUid) {
    return calls.get(claimUid).isPresent();
  }

  /** The claim is gone ({@link Calls#cancel}): whether its call still runs. */
  boolean cancel(String claimUid) {
    return calls.cancel(claimUid);
  }

  /** This replica stopped acting ({@link Calls#drop}). */
  void drop() {
    calls.drop(new ProvisioningException("this replica stopped leading", false, null));
  }

  private StillMaking still(Calls.Call<T> call, CompletableFuture<?> wake) {
    Duration soFar = call.soFar(clock);
    String what = (call.running() ? words.running() : words.waiting()).formatted(call.subject());
    return new StillMaking(
        null,
        what + "; " + Pace.soFar(soFar),
        new ProvisionResult.Progress(soFar, Pace.LONGEST_LOOK, wake));
  }
}
