package org.standalonecinder.provisioner.cinder.openstack;

import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderException;

/**
 * How a client's waits for a status sleep between looks, and give up at their deadline. One per
 * client: it counts the client's waits in progress, and each wait looks no more often than once per
 * {@link #SPREAD} for every wait in progress, so that the waits together ask Cinder at most 40
 * times a second (the claim loop's 16 step threads all waiting: each every 0.4 s at least), while
 * one claim alone is seen as soon as its backoff says (a quarter of its time so far late at most:
 * {@link Backoff}).
 */
final class Waiting {

  /** How much longer the least wait between two looks is, per wait in progress. */
  static final Duration SPREAD = Duration.ofMillis(25);

  private final AtomicInteger inProgress = new AtomicInteger();

  /** How many of this client's waits are in progress. */
  int inProgress() {
    return inProgress.get();
  }

  /**
   * The wait before look {@code attempt + 1}: the backoff's, but at least {@link #SPREAD} for each
   * of {@code waits} in progress, and never past the backoff's longest.
   */
  static Duration delay(Backoff backoff, int attempt, int waits) {
    Duration own = backoff.delay(attempt);
    Duration spread = SPREAD.multipliedBy(Math.max(1, waits));
    if (spread.compareTo(own) <= 0) {
      return own;
    }
    return spread.compareTo(backoff.max()) > 0 ? backoff.max() : spread;
  }

  /**
   * Polls {@code read} until the status of what it reads is one of {@code wanted}: snapshots and
   * backups, whose waits end alike.
   *
   * @param what e.g. {@code snapshot <id>}
   * @param why what an {@code error} status is followed by in the message (Cinder's reason), or
   *     null
   * @throws CinderException.NotFound when it disappears
   * @throws CinderException.UnexpectedState at an {@code error} status, or past the deadline
   */
  <T> T forStatus(
      String what,
      Set<String> wanted,
      Backoff backoff,
      Supplier<Optional<T>> read,
      Function<T, String> status,
      Function<T, String> why) {
    inProgress.incrementAndGet();
    try {
      return pollStatus(what, wanted, backoff, read, status, why);
    } finally {
      inProgress.decrementAndGet();
    }
  }

  private <T> T pollStatus(
      String what,
      Set<String> wanted,
      Backoff backoff,
      Supplier<Optional<T>> read,
      Function<T, String> status,
      Function<T, String> why) {
    long deadline = System.nanoTime() + backoff.deadline().toNanos();
    for (int attempt = 0; ; attempt++) {
      T t =
          read.get()
              .orElseThrow(
                  () ->
                      new CinderException.NotFound(
                          what + " disappeared while waiting for " + wanted, null));
      String s = status.apply(t);
      if (wanted.contains(s)) {
        return t;
      }
      if (s.startsWith("error")) {
        String reason = why.apply(t);
        throw new CinderException.UnexpectedState(
            what
                + " went to status "
                + s
                + " while waiting for "
                + wanted
                + (reason == null ? "" : ": " + reason),
            s,
            false);
      }
      sleepOrGiveUp(backoff, attempt, deadline, what, wanted.toString(), s);
    }
  }

  /**
   * Polls {@code read} until Cinder no longer has what it reads: volumes, snapshots and backups,
   * whose deletions end alike.
   *
   * @param keptBy what a status seen after the first look means when Cinder keeps it after all (the
   *     message to throw), or null when it means nothing of the kind
   * @throws CinderException.UnexpectedState at {@code error_deleting}, when {@code keptBy} says it
   *     is kept, or past the deadline
   */
  <T> void forGone(
      String what,
      Backoff backoff,
      Supplier<Optional<T>> read,
      Function<T, String> status,
      Function<String, String> keptBy) {
    inProgress.incrementAndGet();
    try {
      pollGone(what, backoff, read, status, keptBy);
    } finally {
      inProgress.decrementAndGet();
    }
  }

  private <T> void pollGone(
      String what,
      Backoff backoff,
      Supplier<Optional<T>> read,
      Function<T, String> status,
      Function<String, String> keptBy) {
    long deadline = System.nanoTime() + backoff.deadline().toNanos();
    for (int attempt = 0; ; attempt++) {
      Optional<T> t = read.get();
      if (t.isEmpty()) {
        return;
      }
      String s = status.apply(t.get());
      if (s.equals("error_deleting")) {
        throw new CinderException.UnexpectedState(
            what + " failed to delete (status error_deleting)", s, false);
      }
      String kept = attempt > 0 ? keptBy.apply(s) : null;
      if (kept != null) {
        throw new CinderException.UnexpectedState(what + " " + kept, s, false);
      }
      sleepOrGiveUp(backoff, attempt, deadline, what, "deleted", s);
    }
  }

  /**
   * Sleeps the delay for {@code attempt} ({@link #delay}), or throws when the deadline has passed.
   *
   * @throws CinderException.UnexpectedState (timed out) past the deadline
   */
  private void sleepOrGiveUp(
      Backoff backoff, int attempt, long deadlineNanos, String what, String wanted, String last) {
    long left = deadlineNanos - System.nanoTime();
    if (left <= 0) {
      throw new CinderException.UnexpectedState(
          what
              + " did not become "
              + wanted
              + " within "
              + backoff.deadline().toSeconds()
              + "s (last status "
              + last
              + ")",
          last,
          true);
    }
    long sleep = Math.min(delay(backoff, attempt, inProgress.get()).toNanos(), left);
    try {
      TimeUnit.NANOSECONDS.sleep(sleep);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CinderException.Unavailable(what + ": interrupted while waiting", 0, null, e);
    }
  }
}
