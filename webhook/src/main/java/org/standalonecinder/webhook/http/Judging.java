package org.standalonecinder.webhook.http;

import java.util.concurrent.Callable;

/**
 * One review judged on a worker, cancelled when its client leaves: not started at all if it is
 * still waiting for a worker then, interrupted if it is being judged (its lookups end at the
 * interrupt). So a client that sends reviews and leaves, again and again, cannot keep the workers
 * busy for nobody; nor the API server, which gives up on a review at its timeout.
 */
final class Judging<T> {

  private final Callable<T> judge;
  private Thread judging;
  private boolean cancelled;

  Judging(Callable<T> judge) {
    this.judge = judge;
  }

  /** Judges, on the calling worker; null when cancelled before it started. */
  T run() throws Exception {
    synchronized (this) {
      if (cancelled) {
        return null;
      }
      judging = Thread.currentThread();
    }
    try {
      return judge.call();
    } finally {
      synchronized (this) {
        judging = null;
        // An interrupt is only sent while judging, under this lock: one sent for this review is
        // cleared here, never left for the next task of this worker.
        Thread.interrupted();
      }
    }
  }

  /** The client left: the review is not started, or is interrupted. */
  synchronized void cancel() {
    cancelled = true;
    if (judging != null) {
      judging.interrupt();
    }
  }

  synchronized boolean cancelled() {
    return cancelled;
  }
}
