package org.standalonecinder.provisioner.controller;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Work that waits for Cinder, run off the loops' workers on a bounded number of threads, with lines
 * (namespaces) taking turns and each line running at most half of the threads (at least one):
 * another namespace's work never waits behind a namespace's hundred, nor behind two namespaces'
 * slow work for more than one task's time.
 *
 * <p>What waits is a task per piece of work the caller keeps track of: the pool does not remember
 * outcomes. A task the executor refuses (a thread that cannot be made) is told to its {@code
 * refused} callback and does not count.
 */
public final class FairPool {

  private static final Logger LOG = LoggerFactory.getLogger(FairPool.class);

  /** A task, with when it was submitted ({@link #oldestWait}). */
  private record Task(Runnable run, Consumer<Throwable> refused, long since) {}

  private final Executor executor;
  private final int threads;
  private final int share;
  private final LongSupplier nanoTime;

  /** A line with tasks waiting or running. */
  private static final class Line {
    final Deque<Task> waiting = new ArrayDeque<>();
    int running;

    /** When the line last started a task ({@link #served}); 0 for never. */
    long lastServed;
  }

  /** The lines with tasks waiting or running; in the order they came, for ties. */
  private final Map<String, Line> lines = new LinkedHashMap<>();

  private int runningTotal;

  private volatile boolean standingBy;

  /** How many tasks were started: the clock of the lines' turns. */
  private long served;

  /**
   * @param executor runs the tasks; {@code Runnable::run} runs each on the thread that submits it
   *     (for tests that want the work done in the call that asks for it)
   * @param threads how many tasks run at once
   */
  public FairPool(Executor executor, int threads) {
    this(executor, threads, System::nanoTime);
  }

  /** The same, reading the time from {@code nanoTime} (for tests). */
  FairPool(Executor executor, int threads, LongSupplier nanoTime) {
    this.executor = executor;
    this.threads = threads;
    this.share = Math.max(1, threads / 2);
    this.nanoTime = nanoTime;
  }

  /** Runs each task on the thread that submits it. */
  public static FairPool inline() {
    return new FairPool(Runnable::run, Integer.MAX_VALUE);
  }

  /**
   * A pool of {@code threads} daemon threads named {@code name-n}; idle ones end after a minute.
   */
  public static FairPool ofThreads(int threads, String name) {
    AtomicInteger n = new AtomicInteger();
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            threads,
            threads,
            1,
            TimeUnit.MINUTES,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t = new Thread(r, name + "-" + n.getAndIncrement());
              t.setDaemon(true);
              return t;
            });
    pool.allowCoreThreadTimeOut(true);
    return new FairPool(pool, threads);
  }

  /**
   * Runs {@code task} when its line's turn comes.
   *
   * @param refused told what the executor threw when it would not take the task (it never ran)
   */
  public void submit(String line, Runnable task, Consumer<Throwable> refused) {
    if (standingBy) {
      // A caller that checked standingBy() just before the lead was lost: never run on a standby.
      refused.accept(new ProvisioningException("this replica stopped leading", false, null));
      return;
    }
    synchronized (this) {
      lines
          .computeIfAbsent(line, l -> new Line())
          .waiting
          .add(new Task(task, refused, nanoTime.getAsLong()));
    }
    startWhatMay();
  }

  /**
   * Drops every task not yet running (this replica stopped acting): each is told to its {@code
   * refused} callback with {@code why}. Running tasks finish.
   */
  public void dropWaiting(RuntimeException why) {
    List<Task> dropped = new ArrayList<>();
    synchronized (this) {
      lines.values().forEach(l -> dropped.addAll(l.waiting));
      lines.values().forEach(l -> l.waiting.clear());
      lines.values().removeIf(l -> l.running == 0);
    }
    dropped.forEach(t -> t.refused().accept(why));
  }

  /**
   * This replica stopped acting: what waits is dropped ({@link #dropWaiting}), and until {@link
   * #act} the callers start nothing new ({@link #standingBy}); running tasks finish.
   */
  public void standBy() {
    standingBy = true;
    dropWaiting(new ProvisioningException("this replica stopped leading", false, null));
  }

  /** This replica acts again. */
  public void act() {
    standingBy = false;
  }

  /**
   * Whether this replica stands by: a call started now must not run, nor its outcome count (a
   * worker still at its key when the replica stopped leading asks for one).
   */
  public boolean standingBy() {
    return standingBy;
  }

  /** How many tasks wait for their turn. */
  public synchronized int waiting() {
    return lines.values().stream().mapToInt(l -> l.waiting.size()).sum();
  }

  /** How many tasks run. */
  public synchronized int running() {
    return runningTotal;
  }

  /** How long the task that has waited longest has waited for its turn; zero when none waits. */
  public synchronized Duration oldestWait() {
    long now = nanoTime.getAsLong();
    return Duration.ofNanos(
        lines.values().stream()
            .map(l -> l.waiting.peek())
            .filter(java.util.Objects::nonNull)
            .mapToLong(t -> now - t.since())
            .max()
            .orElse(0));
  }

  /**
   * Stops for good, before what the tasks need is closed (the Kubernetes and Cinder clients) and
   * before another replica may lead: what waits is dropped ({@link #standBy}); running tasks get
   * {@code grace} to end, then are interrupted (a Cinder wait ends at once, as a retryable failure)
   * and get {@code grace} again. Every task is safe to repeat, so one cut short is done again by
   * the replica that leads next.
   *
   * @return how many tasks still run after that (0 unless one ignores interrupts), each logged
   */
  public int close(Duration grace) {
    int left = stop(grace, grace);
    if (left > 0 && grace.isZero()) {
      LOG.info("interrupted {} running step(s): the next leader does them again", left);
    } else if (left > 0) {
      LOG.warn(
          "{} step(s) still run {} ms after the stop, interrupted: the next leader does them again"
              + " (each is safe to repeat)",
          left,
          2 * grace.toMillis());
    }
    return left;
  }

  /**
   * {@link #close(Duration)} by {@code by}: the running tasks get half of what is left of it, then
   * are interrupted and get the other half, at least {@link #INTERRUPTED_GRACE} (a task that heeds
   * the interrupt is not counted as running on).
   */
  public int close(Deadline by) {
    Duration half = by.left().dividedBy(2);
    int left = stop(half, half.compareTo(INTERRUPTED_GRACE) < 0 ? INTERRUPTED_GRACE : half);
    if (left > 0) {
      LOG.warn("{} step(s) still run after the stop and an interrupt", left);
    }
    return left;
  }

  /** How long tasks interrupted at a stop's deadline are waited for, at least. */
  static final Duration INTERRUPTED_GRACE = Duration.ofMillis(200);

  private int stop(Duration before, Duration after) {
    standBy();
    if (executor instanceof ExecutorService service) {
      service.shutdown();
      try {
        if (!service.awaitTermination(before.toNanos(), TimeUnit.NANOSECONDS)) {
          neverBegun(service.shutdownNow());
          service.awaitTermination(after.toNanos(), TimeUnit.NANOSECONDS);
        }
      } catch (InterruptedException e) {
        neverBegun(service.shutdownNow());
        Thread.currentThread().interrupt();
      }
    }
    return running();
  }

  /** Tasks the executor had taken but not begun when it was shut down: told, and not counted. */
  private void neverBegun(List<Runnable> left) {
    for (Runnable r : left) {
      if (r instanceof Started s) {
        synchronized (this) {
          uncount(s.line);
        }
        s.task.refused().accept(new ProvisioningException("the pool was closed", false, null));
      }
    }
  }

  /** A task handed to the executor, in its line. */
  private final class Started implements Runnable {
    final String line;
    final Task task;
    final java.util.concurrent.atomic.AtomicBoolean began;

    Started(String line, Task task, java.util.concurrent.atomic.AtomicBoolean began) {
      this.line = line;
      this.task = task;
      this.began = began;
    }

    @Override
    public void run() {
      began.set(true);
      try {
        task.run().run();
      } finally {
        ended(line);
      }
    }
  }

  /**
   * Starts what may start, outside the lock: an inline executor runs the task right here. A task
   * the executor refuses frees its thread for the next one at once, so the tasks behind it do not
   * wait for another submit; an executor that refuses everything empties the queue, each told.
   */
  private void startWhatMay() {
    List<Map.Entry<String, Task>> starting = mayStart();
    while (!starting.isEmpty()) {
      if (!startAll(starting)) {
        return;
      }
      starting = mayStart();
    }
  }

  /** Hands each task to the executor; whether any was refused (its thread is free again). */
  private boolean startAll(List<Map.Entry<String, Task>> starting) {
    boolean refusedAny = false;
    for (Map.Entry<String, Task> next : starting) {
      String line = next.getKey();
      Task task = next.getValue();
      java.util.concurrent.atomic.AtomicBoolean began =
          new java.util.concurrent.atomic.AtomicBoolean();
      try {
        executor.execute(new Started(line, task, began));
      } catch (RuntimeException | Error e) {
        if (began.get()) {
          throw e; // the task itself threw, on an inline executor: it was counted out as it ended
        }
        synchronized (this) {
          uncount(line);
        }
        task.refused().accept(e);
        refusedAny = true;
      }
    }
    return refusedAny;
  }

  /**
   * The tasks that may start now: each time, of the lines with a task waiting and room under their
   * share, the one served longest ago (a line that never ran first), so a namespace that comes to a
   * busy pool is next.
   */
  private synchronized List<Map.Entry<String, Task>> mayStart() {
    List<Map.Entry<String, Task>> starting = new ArrayList<>();
    while (runningTotal < threads) {
      Map.Entry<String, Line> next = null;
      for (Map.Entry<String, Line> e : lines.entrySet()) {
        Line l = e.getValue();
        if (!l.waiting.isEmpty()
            && l.running < share
            && (next == null || l.lastServed < next.getValue().lastServed)) {
          next = e;
        }
      }
      if (next == null) {
        break;
      }
      Line l = next.getValue();
      l.running++;
      l.lastServed = ++served;
      runningTotal++;
      starting.add(Map.entry(next.getKey(), l.waiting.poll()));
    }
    return starting;
  }

  private void ended(String line) {
    synchronized (this) {
      uncount(line);
    }
    startWhatMay();
  }

  private void uncount(String line) {
    Line l = lines.get(line);
    l.running--;
    if (l.running == 0 && l.waiting.isEmpty()) {
      lines.remove(line);
    }
    runningTotal--;
  }
}
