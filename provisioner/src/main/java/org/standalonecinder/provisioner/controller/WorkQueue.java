package org.standalonecinder.provisioner.controller;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A keyed work queue as in client-go: a key waits in the queue at most once, a key being worked on
 * is never handed to a second worker, and a key added while it is being worked on is queued again
 * when the worker is done. Delayed adds serve backoff and resync.
 */
final class WorkQueue {

  private final BlockingQueue<String> ready = new LinkedBlockingQueue<>();
  private final Set<String> queued = new HashSet<>();
  private final Set<String> processing = new HashSet<>();
  private final Set<String> dirty = new HashSet<>();
  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "workqueue-delay");
            t.setDaemon(true);
            return t;
          });
  private volatile boolean shutDown;

  synchronized void add(String key) {
    if (shutDown) {
      return;
    }
    if (processing.contains(key)) {
      dirty.add(key);
      return;
    }
    if (queued.add(key)) {
      ready.add(key);
    }
  }

  void addAfter(String key, Duration delay) {
    if (!shutDown) {
      timer.schedule(() -> add(key), delay.toMillis(), TimeUnit.MILLISECONDS);
    }
  }

  /** The next key, or null after {@code timeout} or shut-down; call {@link #done} after. */
  String take(Duration timeout) throws InterruptedException {
    String key = ready.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    if (key == null) {
      return null;
    }
    synchronized (this) {
      queued.remove(key);
      processing.add(key);
    }
    return key;
  }

  synchronized void done(String key) {
    processing.remove(key);
    if (dirty.remove(key) && queued.add(key)) {
      ready.add(key);
    }
  }

  synchronized int size() {
    return queued.size();
  }

  void shutDown() {
    shutDown = true;
    timer.shutdownNow();
  }
}
