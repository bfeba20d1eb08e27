package org.standalonecinder.e2e.standin;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * client-go's rate-limited work queue as the real one uses it: a key is queued once however often
 * it is added, a key added while it is worked on is worked on again after, and a failed key comes
 * back after 1 s, doubling up to 5 minutes (its {@code --retry-interval-start} and {@code -max}).
 */
final class KeyQueue implements AutoCloseable {

  static final Duration FIRST_RETRY = Duration.ofSeconds(1);
  static final Duration LAST_RETRY = Duration.ofMinutes(5);

  private final LinkedHashSet<String> queued = new LinkedHashSet<>();
  private final Set<String> working = new HashSet<>();
  private final Set<String> dirty = new HashSet<>();
  private final Map<String, Integer> failures = new HashMap<>();

  /** When each key's pending retry is due: one a key, the earliest (client-go's AddAfter). */
  private final Map<String, Long> retries = new HashMap<>();

  private final ScheduledExecutorService later;
  private boolean closed;

  KeyQueue(String name) {
    later =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "snapshot-controller-stand-in-" + name + "-retries");
              t.setDaemon(true);
              return t;
            });
  }

  synchronized void add(String key) {
    if (closed) {
      return;
    }
    if (working.contains(key)) {
      dirty.add(key);
    } else if (queued.add(key)) {
      notifyAll();
    }
  }

  /** The next key, or null once closed. */
  synchronized String take() throws InterruptedException {
    while (queued.isEmpty() && !closed) {
      wait();
    }
    if (closed) {
      return null;
    }
    String key = queued.iterator().next();
    queued.remove(key);
    working.add(key);
    return key;
  }

  /** The work on {@code key} is over: {@code failed} brings it back after its backoff. */
  synchronized void done(String key, boolean failed) {
    working.remove(key);
    if (dirty.remove(key)) {
      queued.add(key);
      notifyAll();
    }
    if (!failed) {
      failures.remove(key);
      return;
    }
    int n = failures.merge(key, 1, Integer::sum);
    long delay = backoff(n).toMillis();
    long due = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delay);
    Long pending = retries.get(key);
    if (closed || pending != null && pending - due <= 0) {
      return;
    }
    retries.put(key, due);
    later.schedule(() -> retry(key, due), delay, TimeUnit.MILLISECONDS);
  }

  private synchronized void retry(String key, long due) {
    if (Long.valueOf(due).equals(retries.get(key))) {
      retries.remove(key);
    }
    add(key);
  }

  static Duration backoff(int failures) {
    Duration d = FIRST_RETRY.multipliedBy(1L << Math.min(failures - 1, 20));
    return d.compareTo(LAST_RETRY) > 0 ? LAST_RETRY : d;
  }

  synchronized int size() {
    return queued.size();
  }

  @Override
  public synchronized void close() {
    closed = true;
    later.shutdownNow();
    notifyAll();
  }
}
