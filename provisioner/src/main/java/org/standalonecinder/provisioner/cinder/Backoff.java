package org.standalonecinder.provisioner.cinder;

import java.time.Duration;
import java.util.Objects;

/**
 * Exponential backoff with a cap and a deadline, used while waiting for a volume to change state.
 *
 * <p>Volumes usually become available in a fraction of a second, but clones of big volumes take
 * minutes: a fixed poll either hammers the API or wastes the fast case. Defaults: first wait 100
 * ms, each wait a quarter longer than the one before, at most 5 s between polls, give up after 10
 * minutes. A wait that grows by a quarter is a quarter of the time waited so far, so what ends
 * after {@code t} is seen at most {@code t/4} (and at most 5 s) late: doubling saw a create that
 * Cinder ended at 6.4 s only at 11.3 s, which a claim's user waits for. It costs about twenty looks
 * for the first twenty seconds, one per 5 s after that.
 *
 * @param initial the first wait
 * @param multiplier how much each wait grows
 * @param max the longest wait between two polls
 * @param deadline how long to wait in total
 */
public record Backoff(Duration initial, double multiplier, Duration max, Duration deadline) {

  public static final Backoff DEFAULT =
      new Backoff(Duration.ofMillis(100), 1.25, Duration.ofSeconds(5), Duration.ofMinutes(10));

  public Backoff {
    Objects.requireNonNull(initial, "initial");
    Objects.requireNonNull(max, "max");
    Objects.requireNonNull(deadline, "deadline");
    if (initial.isNegative() || initial.isZero()) {
      throw new IllegalArgumentException("initial must be positive");
    }
    if (multiplier < 1.0) {
      throw new IllegalArgumentException("multiplier must be at least 1");
    }
    if (max.compareTo(initial) < 0) {
      throw new IllegalArgumentException("max must be at least initial");
    }
  }

  /** The wait before poll number {@code attempt} (0-based). */
  public Duration delay(int attempt) {
    double millis = initial.toMillis() * Math.pow(multiplier, Math.max(0, attempt));
    return millis >= max.toMillis() ? max : Duration.ofMillis((long) millis);
  }

  public Backoff withDeadline(Duration d) {
    return new Backoff(initial, multiplier, max, d);
  }
}
