package org.standalonecinder.provisioner.cinder.openstack;

import java.util.concurrent.TimeUnit;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderException;

/** How a wait for a volume's status sleeps between looks, and gives up at its deadline. */
final class Waiting {

  private Waiting() {}

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
