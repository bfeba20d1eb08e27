package org.standalonecinder.provisioner.cinder;

import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Wraps a real client and fails calls at random: before the call (Cinder never saw it) or after it
 * (Cinder did it, the answer was lost), the worst case for idempotency. Seeded, so a failing run
 * can be repeated.
 */
public final class FaultyCinderClient {

  /** Calls that change nothing: failed only before they are made. */
  private static final Set<String> READS =
      Set.of("getVolume", "findVolumes", "getAttachment", "listAttachments");

  /** Calls passed through untouched: waits (their polls are reads), discovery, pools. */
  private static final Set<String> UNTOUCHED =
      Set.of("apiVersions", "awaitVolumeStatus", "awaitVolumeDeleted", "pools", "close");

  private final CinderClient client;
  private final Random random;
  private final double probability;
  private final AtomicInteger injected = new AtomicInteger();

  public FaultyCinderClient(CinderClient delegate, long seed, double probability) {
    this.random = new Random(seed);
    this.probability = probability;
    this.client =
        CinderDecorator.wrap(
            delegate,
            (op, args, call) ->
                UNTOUCHED.contains(op) ? call.proceed() : maybe(op, !READS.contains(op), call));
  }

  /** The faulty client. */
  public CinderClient client() {
    return client;
  }

  /** How many faults were injected so far. */
  public int injected() {
    return injected.get();
  }

  private synchronized double roll() {
    return random.nextDouble();
  }

  private Object maybe(String op, boolean mayHappen, CinderDecorator.Call call) {
    double r = roll();
    if (r < probability / 2) {
      injected.incrementAndGet();
      throw new CinderException.Unavailable(op + ": injected fault before the call", 0, null, null);
    }
    Object result = call.proceed();
    if (mayHappen && r < probability) {
      injected.incrementAndGet();
      throw new CinderException.Unavailable(op + ": injected fault, answer lost", 0, null, null);
    }
    return result;
  }
}
