package org.standalonecinder.provisioner.cinder.openstack;

import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderException;

/** How a wait for a volume's status sleeps between looks, and gives up at its deadline. */
final class Waiting {

  private Waiting() {}

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
  static <T> T forStatus(
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
  static <T> void forGone(
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
   * Sleeps the backoff's delay for {@code attempt}, or throws when the deadline has passed.
   *
   * @throws CinderException.UnexpectedState (timed out) past the deadline
   */
  static void sleepOrGiveUp(
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
    long sleep = Math.min(backoff.delay(attempt).toNanos(), left);
    try {
      TimeUnit.NANOSECONDS.sleep(sleep);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CinderException.Unavailable(what + ": interrupted while waiting", 0, null, e);
    }
  }
}
