package org.standalonecinder.provisioner.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The pool that slow work runs on off the workers: a namespace's backlog leaves room for others,
 * and a task that cannot start or is dropped is told, never lost.
 */
class FairPoolTest {

  /** Tasks handed to the executor, not yet run: the test ends them one by one. */
  private final List<String> started = new ArrayList<>();

  private final List<Runnable> handed = new ArrayList<>();
  private final List<String> refused = new ArrayList<>();

  private void submit(FairPool pool, String line, String name) {
    pool.submit(line, () -> started.add(name), e -> refused.add(name + ": " + e.getMessage()));
  }

  /** Runs the oldest task handed to the executor (it ends at once). */
  private void endOne() {
    handed.remove(0).run();
  }

  static Stream<Arguments> backlogs() {
    return Stream.of(
        Arguments.of("4 threads: a backlog takes 2, another line's task starts at once", 4, 2, 2),
        Arguments.of("2 threads: a backlog takes 1, another line's task starts at once", 2, 1, 1),
        Arguments.of("1 thread: a backlog takes it, the other line's task is next", 1, 1, 1));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("backlogs")
  void aNamespacesBacklogTakesAtMostHalfOfTheThreads(
      String name, int threads, int share, int before) {
    FairPool pool = new FairPool(handed::add, threads);
    for (int i = 0; i < 10; i++) {
      submit(pool, "busy", "busy-" + i);
    }
    submit(pool, "quiet", "quiet-0");
    assertThat(handed).hasSize(Math.min(threads, share + 1));
    assertThat(pool.waiting()).isEqualTo(11 - handed.size());
    while (!handed.isEmpty() && !started.contains("quiet-0")) {
      endOne();
    }
    // The quiet line's task ran before all but a few of the busy line's backlog.
    assertThat(started.indexOf("quiet-0")).isEqualTo(before);
  }

  @Test
  void linesTakeTurns() {
    FairPool pool = new FairPool(handed::add, 1);
    for (String line : List.of("a", "b", "c")) {
      for (int i = 0; i < 2; i++) {
        submit(pool, line, line + i);
      }
    }
    while (!handed.isEmpty()) {
      endOne();
    }
    assertThat(started).containsExactly("a0", "b0", "c0", "a1", "b1", "c1");
  }

  /**
   * A task the executor refuses is told, and its thread goes to the task behind it at once (one
   * submitted while the refused task held the only thread): no further submit is needed.
   */
  @Test
  void aTaskTheExecutorRefusesIsToldAndLeavesItsThreadToTheNext() {
    AtomicInteger calls = new AtomicInteger();
    FairPool[] pool = new FairPool[1];
    Executor refusesFirst =
        r -> {
          if (calls.getAndIncrement() == 0) {
            submit(pool[0], "b", "submitted-meanwhile");
            throw new RejectedExecutionException("no thread");
          }
          handed.add(r);
        };
    pool[0] = new FairPool(refusesFirst, 1);
    submit(pool[0], "a", "refused");
    assertThat(refused).containsExactly("refused: no thread");
    assertThat(handed).as("the task behind it, started with no further submit").hasSize(1);
    endOne();
    assertThat(started).containsExactly("submitted-meanwhile");
    assertThat(pool[0].waiting()).isZero();
  }

  @Test
  void droppedTasksAreToldAndNeverRunWhileRunningOnesFinish() {
    FairPool pool = new FairPool(handed::add, 2);
    submit(pool, "a", "running");
    submit(pool, "a", "waiting-a");
    submit(pool, "b", "running-b");
    submit(pool, "b", "waiting-b");
    pool.dropWaiting(new IllegalStateException("stopped leading"));
    assertThat(refused)
        .containsExactlyInAnyOrder("waiting-a: stopped leading", "waiting-b: stopped leading");
    while (!handed.isEmpty()) {
      endOne();
    }
    assertThat(started).containsExactlyInAnyOrder("running", "running-b");
    assertThat(pool.waiting()).isZero();
  }

  @Test
  void itCountsWhatWaitsAndRunsAndHowLongTheOldestHasWaited() {
    long[] now = {0};
    FairPool pool = new FairPool(handed::add, 1, () -> now[0]);
    assertThat(pool.oldestWait()).isZero();
    submit(pool, "a", "running");
    submit(pool, "b", "first-waiting");
    now[0] += 3_000_000_000L;
    submit(pool, "a", "then-a");
    now[0] += 1_000_000_000L;
    assertThat(List.of(pool.running(), pool.waiting())).containsExactly(1, 2);
    assertThat(pool.oldestWait()).isEqualTo(Duration.ofSeconds(4));
    endOne();
    assertThat(started).containsExactly("running");
    assertThat(pool.oldestWait()).as("the older one started").isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void itsGaugesCountTheLoopsSteps() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    FairPool pool = new FairPool(handed::add, 1);
    new LoopMetrics(registry).steps("claims", pool);
    submit(pool, "tenant-a", "running");
    submit(pool, "tenant-b", "waiting");
    assertThat(
            registry.get("standalone_cinder_steps_waiting").tag("loop", "claims").gauge().value())
        .isEqualTo(1);
    assertThat(
            registry.get("standalone_cinder_steps_running").tag("loop", "claims").gauge().value())
        .isEqualTo(1);
  }

  /** What a running step does when the pool is closed under it. */
  enum Step {
    ENDS_WITHIN_THE_GRACE(0, false),
    WAITS_FOR_CINDER_UNTIL_INTERRUPTED(0, true),
    IGNORES_INTERRUPTS(1, true);

    final int left;
    final boolean interrupted;

    Step(int left, boolean interrupted) {
      this.left = left;
      this.interrupted = interrupted;
    }
  }

  /**
   * A stop waits for the running steps, interrupts the ones that outlast the grace, and says how
   * many still run: the clients and the lead are handed on only after that.
   */
  @ParameterizedTest(name = "{0}")
  @EnumSource(Step.class)
  void closingGivesRunningStepsTheirGraceThenInterruptsThem(Step step) throws Exception {
    FairPool pool = FairPool.ofThreads(2, "test-steps");
    CountDownLatch began = new CountDownLatch(1);
    AtomicBoolean interrupted = new AtomicBoolean();
    AtomicBoolean stop = new AtomicBoolean();
    pool.submit(
        "a",
        () -> {
          began.countDown();
          try {
            switch (step) {
              case ENDS_WITHIN_THE_GRACE -> Thread.sleep(100);
              case WAITS_FOR_CINDER_UNTIL_INTERRUPTED -> Thread.sleep(60_000);
              case IGNORES_INTERRUPTS -> {
                while (!stop.get()) {
                  if (Thread.interrupted()) {
                    interrupted.set(true);
                  }
                  java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
                }
              }
            }
          } catch (InterruptedException e) {
            interrupted.set(true);
          }
        },
        e -> refused.add("running: " + e));
    pool.submit("a", () -> started.add("never"), e -> refused.add("waiting"));
    assertThat(began.await(10, TimeUnit.SECONDS)).isTrue();
    try {
      assertThat(pool.close(Duration.ofMillis(500))).as("still running").isEqualTo(step.left);
      assertThat(interrupted.get()).as("interrupted").isEqualTo(step.interrupted);
      assertThat(refused).as("what waited is told, never run").containsExactly("waiting");
      assertThat(started).isEmpty();
      pool.submit("b", () -> started.add("after the stop"), e -> refused.add("after the stop"));
      assertThat(refused).contains("after the stop");
    } finally {
      stop.set(true);
    }
  }
}
