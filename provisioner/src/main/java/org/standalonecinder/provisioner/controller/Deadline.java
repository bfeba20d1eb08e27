package org.standalonecinder.provisioner.controller;

import java.time.Duration;

/**
 * A point in time that several waits share, each taking what is left of it: a stop of every loop
 * and its pool ends by one deadline, however many of them wait.
 *
 * @param atNanos when it passes, on {@link System#nanoTime}'s clock
 */
public record Deadline(long atNanos) {

  /** The deadline {@code d} from now. */
  public static Deadline after(Duration d) {
    return new Deadline(System.nanoTime() + d.toNanos());
  }

  /** What is left of it; zero once it has passed. */
  public Duration left() {
    long n = atNanos - System.nanoTime();
    return n <= 0 ? Duration.ZERO : Duration.ofNanos(n);
  }
}
