package org.standalonecinder.webhook.cli;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.time.Duration;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The API server calls the webhook makes before it serves (its clone token key, its CA), tried
 * again while they fail in a way the API server recovers from.
 *
 * <p>The webhook's client fails fast (2 s, no retries) because a review waits on its lookups; at
 * start that made one slow connection a crash: a Pod starting on a busy node exited with the first
 * timeout and counted a restart. Both calls look up before they create, so each attempt is safe to
 * repeat. A refusal (4xx) is no outage: it is thrown at once, as is anything past the patience,
 * which stays inside the startup probe's window (so a webhook that cannot start still restarts).
 */
record StartupCalls(Duration patience, LongSupplier nanoTime, StartupCalls.Pause pause) {

  /** Inside the startup probe's 180 s, with room for the JVM's own start. */
  static final Duration PATIENCE = Duration.ofSeconds(90);

  private static final Logger LOG = LoggerFactory.getLogger(StartupCalls.class);
  private static final Duration FIRST_PAUSE = Duration.ofMillis(500);
  private static final Duration LONGEST_PAUSE = Duration.ofSeconds(8);

  /** A call to the API server. */
  interface Call<T> {
    T run() throws IOException;
  }

  /** Sleeps between attempts (a test's does not). */
  interface Pause {
    void sleep(Duration d) throws InterruptedException;
  }

  static StartupCalls standard() {
    return new StartupCalls(PATIENCE, System::nanoTime, d -> Thread.sleep(d.toMillis()));
  }

  /**
   * Runs {@code call} until it succeeds, fails for good, or the patience is spent.
   *
   * @param what what the call reads, for the log
   */
  <T> T run(String what, Call<T> call) throws IOException, InterruptedException {
    long end = nanoTime.getAsLong() + patience.toNanos();
    Duration next = FIRST_PAUSE;
    for (int attempt = 1; ; attempt++) {
      try {
        return call.run();
      } catch (KubernetesClientException e) {
        long left = end - nanoTime.getAsLong();
        if (!passing(e) || left < next.toNanos()) {
          throw e;
        }
        LOG.warn(
            "{}: the API server did not answer (attempt {}: {}); trying again in {} ms",
            what,
            attempt,
            e.getMessage(),
            next.toMillis());
        pause.sleep(next);
        next = java.util.Collections.min(java.util.List.of(next.multipliedBy(2), LONGEST_PAUSE));
      }
    }
  }

  /**
   * Whether the API server may answer later: no answer at all (a connection refused or timed out,
   * which fabric8 gives no status code: -1, or 0 from some paths), an error of its own (5xx) or its
   * throttling (429).
   */
  static boolean passing(KubernetesClientException e) {
    int code = e.getCode();
    return code <= 0 || code == 429 || code >= 500;
  }
}
