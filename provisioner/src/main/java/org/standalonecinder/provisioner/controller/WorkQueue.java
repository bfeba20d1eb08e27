package org.standalonecinder.provisioner.controller;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * A keyed work queue as in client-go: a key waits in the queue at most once, a key being worked on
 * is never handed to a second worker, and a key added while it is being worked on is queued again
 * when the worker is done. Delayed adds serve backoff, one pending per key. A paused queue keeps
 * taking keys but hands none out, so a standby holds everything that arrived until it leads.
 *
 * <p>Unlike client-go's, it is fair between owners: keys wait in one line per bucket (for claims,
 * their namespace) and the lines take turns, so the thousands of claims one tenant can make delay
 * another tenant's claim by at most one key per busy namespace, not by all of them.
 */
public final class WorkQueue<K> {

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition handOut = lock.newCondition();
  private final Function<K, String> bucketOf;
  // Each bucket's waiting keys, and the buckets with some in the order they take turns.
  private final Map<String, ArrayDeque<K>> lines = new HashMap<>();
  private final ArrayDeque<String> turns = new ArrayDeque<>();
  private final Set<K> queued = new HashSet<>();
  private final Set<K> processing = new HashSet<>();
  private final Set<K> dirty = new HashSet<>();
  private final ScheduledThreadPoolExecutor timer = delayTimer();
  // Under the lock: each key's one pending delayed add.
  private final Map<K, Pending> delayed = new HashMap<>();
  private boolean paused;
  private boolean shutDown;

  private static ScheduledThreadPoolExecutor delayTimer() {
    ScheduledThreadPoolExecutor t =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread th = new Thread(r, "workqueue-delay");
              th.setDaemon(true);
              return th;
            });
    // A delayed add replaced by an earlier one leaves the timer's queue at once, not when due.
    t.setRemoveOnCancelPolicy(true);
    return t;
  }

  /**
   * @param bucketOf the owner whose keys share one line (all in one when constant)
   */
  public WorkQueue(Function<K, String> bucketOf) {
    this.bucketOf = bucketOf;
  }

  // Under the lock; before any of the queue's state changes, so a line that cannot be told
  // leaves nothing half done.
  private String lineOf(K key) {
    try {
      return bucketOf.apply(key);
    } catch (OutOfMemoryError e) {
      throw e;
    } catch (Throwable unreadable) {
      return "";
    }
  }

  // Under the lock: queues a key not waiting yet, in its owner's line.
  private void enqueue(K key) {
    if (queued.contains(key)) {
      return;
    }
    String bucket = lineOf(key);
    queued.add(key);
    ArrayDeque<K> line = lines.get(bucket);
    if (line == null) {
      line = new ArrayDeque<>();
      lines.put(bucket, line);
      turns.add(bucket);
    }
    line.add(key);
    handOut.signal();
  }

  // Under the lock, with a key waiting: the first of the bucket whose turn it is.
  private K dequeue() {
    String bucket = turns.poll();
    ArrayDeque<K> line = lines.get(bucket);
    K key = line.poll();
    if (line.isEmpty()) {
      lines.remove(bucket);
    } else {
      turns.add(bucket);
    }
    return key;
  }

  public void add(K key) {
    lock.lock();
    try {
      if (shutDown) {
        return;
      }
      if (processing.contains(key)) {
        dirty.add(key);
        return;
      }
      enqueue(key);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Adds {@code key} after {@code delay}. A key has at most one delayed add pending, the earliest
   * asked for: a later one is dropped, an earlier one replaces it. So a key costs one timer however
   * often it fails or is looked at again, and a hostile object's retries do not pile up.
   */
  public void addAfter(K key, Duration delay) {
    long at = System.nanoTime() + delay.toNanos();
    lock.lock();
    try {
      if (shutDown) {
        return;
      }
      Pending pending = delayed.get(key);
      if (pending != null) {
        if (pending.at - at <= 0) {
          return;
        }
        pending.timer.cancel(false);
      }
      Pending mine = new Pending(at);
      mine.timer =
          this.timer.schedule(() -> fire(key, mine), delay.toMillis(), TimeUnit.MILLISECONDS);
      delayed.put(key, mine);
    } catch (RejectedExecutionException shuttingDown) {
      // the queue is shut down: nothing is worked on any more
    } finally {
      lock.unlock();
    }
  }

  /**
   * Drops {@code key}'s delayed add, if one is pending: a look took the outcome that delay was
   * waiting for (work run off the workers), and decides anew when the key comes back.
   */
  public void unschedule(K key) {
    lock.lock();
    try {
      Pending pending = delayed.remove(key);
      if (pending != null) {
        pending.timer.cancel(false);
      }
    } finally {
      lock.unlock();
    }
  }

  private void fire(K key, Pending mine) {
    lock.lock();
    try {
      if (!delayed.remove(key, mine)) {
        return; // replaced by an earlier one, which has fired or will
      }
    } finally {
      lock.unlock();
    }
    add(key);
  }

  /** A delayed add: when it is due, and its timer (set under the lock right after scheduling). */
  private static final class Pending {
    final long at;
    ScheduledFuture<?> timer;

    Pending(long at) {
      this.at = at;
    }
  }

  /** Whether {@code key} is to be added again after a delay (backoff, work in background). */
  public boolean scheduled(K key) {
    lock.lock();
    try {
      return delayed.containsKey(key);
    } finally {
      lock.unlock();
    }
  }

  /** How many timers wait to add a key: at most one a key. */
  public int pending() {
    return timer.getQueue().size();
  }

  /**
   * The next key, waiting while the queue is empty or paused; null once it is shut down. Call
   * {@link #done} after.
   */
  public K take() throws InterruptedException {
    lock.lock();
    try {
      while (!shutDown && (paused || turns.isEmpty())) {
        handOut.await();
      }
      if (shutDown) {
        return null;
      }
      K key = dequeue();
      queued.remove(key);
      processing.add(key);
      return key;
    } finally {
      lock.unlock();
    }
  }

  public void done(K key) {
    lock.lock();
    try {
      processing.remove(key);
      if (dirty.remove(key)) {
        enqueue(key);
      }
    } finally {
      lock.unlock();
    }
  }

  /** Stops (or resumes) handing keys out; keys in progress finish. */
  public void paused(boolean pause) {
    lock.lock();
    try {
      paused = pause;
      handOut.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Whether {@code key} waits in the queue. */
  public boolean waiting(K key) {
    lock.lock();
    try {
      return queued.contains(key);
    } finally {
      lock.unlock();
    }
  }

  public int size() {
    lock.lock();
    try {
      return queued.size();
    } finally {
      lock.unlock();
    }
  }

  public void shutDown() {
    lock.lock();
    try {
      shutDown = true;
      handOut.signalAll();
    } finally {
      lock.unlock();
    }
    timer.shutdownNow();
  }
}
