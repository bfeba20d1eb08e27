package org.standalonecinder.provisioner.controller;

import java.time.Duration;

/**
 * How often and how fast a failing item is tried again: exponential backoff from {@code initial},
 * doubling, capped at {@code max}; after {@code threshold} consecutive failures the controller
 * gives up on the item with a Warning event (until the object changes or the controller restarts).
 * Defaults: 1 s, 5 min, 15 failures (about 45 minutes of trying).
 *
 * @param initial the first delay
 * @param max the longest delay
 * @param threshold failures after which to give up
 */
public record RetryPolicy(Duration initial, Duration max, int threshold) {

  public static final RetryPolicy DEFAULT =
      new RetryPolicy(Duration.ofSeconds(1), Duration.ofMinutes(5), 15);

  public RetryPolicy {
    if (initial.isZero() || initial.isNegative() || max.compareTo(initial) < 0 || threshold < 1) {
      throw new IllegalArgumentException(
          "retry policy needs 0 < initial <= max and a threshold of at least 1");
    }
  }

  /** The delay after the {@code failures}-th consecutive failure (1-based). */
  public Duration delay(int failures) {
    int shift = Math.min(Math.max(failures - 1, 0), 30);
    long millis = initial.toMillis() << shift;
    return millis <= 0 || millis > max.toMillis() ? max : Duration.ofMillis(millis);
  }

  /** Whether {@code failures} consecutive failures are enough to give up. */
  public boolean exhausted(int failures) {
    return failures >= threshold;
  }
}
