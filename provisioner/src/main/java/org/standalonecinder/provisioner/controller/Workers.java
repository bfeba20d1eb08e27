package org.standalonecinder.provisioner.controller;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A loop's worker threads, one per slot: a slot's thread that died is replaced in place, and a stop
 * waits for them until a deadline, then interrupts those still at work.
 */
final class Workers {

  /** How long a worker interrupted at the stop's deadline is waited for. */
  static final Duration INTERRUPTED_GRACE = Duration.ofMillis(200);

  private final List<Thread> threads = new ArrayList<>();

  /** Starts {@code t} (a daemon) in {@code slot}, in place of the thread there. */
  void start(int slot, Thread t) {
    t.setDaemon(true);
    // Started under the lock: /healthz never sees the new worker before it is alive.
    synchronized (threads) {
      if (slot < threads.size()) {
        threads.set(slot, t);
      } else {
        threads.add(t);
      }
      t.start();
    }
  }

  /** How many are alive. */
  long alive() {
    synchronized (threads) {
      return threads.stream().filter(Thread::isAlive).count();
    }
  }

  /** Whether every one started is alive. */
  boolean allAlive() {
    synchronized (threads) {
      return threads.stream().allMatch(Thread::isAlive);
    }
  }

  /**
   * Waits until {@code by} for every worker to end; interrupts those still at work then and waits
   * {@link #INTERRUPTED_GRACE} more.
   *
   * @return how many still run after that (0 unless one ignores interrupts)
   */
  int stop(Deadline by) {
    List<Thread> all;
    synchronized (threads) {
      all = List.copyOf(threads);
    }
    try {
      joinAll(all, by);
      List<Thread> busy = all.stream().filter(Thread::isAlive).toList();
      if (busy.isEmpty()) {
        return 0;
      }
      busy.forEach(Thread::interrupt);
      joinAll(busy, Deadline.after(INTERRUPTED_GRACE));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return (int) all.stream().filter(Thread::isAlive).count();
  }

  /** Waits for each thread to end, until {@code by} (each at least a moment: it may be ending). */
  private static void joinAll(List<Thread> threads, Deadline by) throws InterruptedException {
    for (Thread t : threads) {
      t.join(Math.max(1, by.left().toMillis())); // join(0) would wait for ever
    }
  }
}
