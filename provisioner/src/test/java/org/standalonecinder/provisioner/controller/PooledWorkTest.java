package org.standalonecinder.provisioner.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A loop's steps off its workers (the snapshot loop's contents): a look starts the step and goes
 * on, the step's end brings the key back, and that look takes its outcome, for the object as it was
 * asked for. The pool here runs a task only when the test says so.
 */
class PooledWorkTest {

  private static final String SLOW = "content/snapcontent-1";
  private static final String QUICK = "apps/snap-1";

  private final List<Runnable> tasks = new ArrayList<>();
  private final List<String> woken = new ArrayList<>();
  private final List<String> unscheduled = new ArrayList<>();
  private boolean quickNow;
  private final List<String> worked = new ArrayList<>();
  private Supplier<Optional<Duration>> answer = () -> Optional.of(Duration.ofSeconds(2));
  private final FairPool pool = new FairPool(tasks::add, 4);
  private final PooledWork<String> work =
      new PooledWork<>(
          new Inner(),
          pool,
          (k, o) -> k.startsWith("content/") && !quickNow,
          k -> "apps",
          woken::add,
          unscheduled::add,
          clock());

  private static Clock clock() {
    return Clock.systemUTC();
  }

  /** Records the steps it is asked for, and answers {@link #answer}. */
  private final class Inner implements LoopWork<String> {
    @Override
    public HasMetadata lookUp(String key) {
      return null;
    }

    @Override
    public Optional<Duration> work(String key, HasMetadata object) {
      worked.add(key + (object == null ? " (gone)" : " at " + PooledWork.version(object)));
      return answer.get();
    }

    @Override
    public boolean tell(String key, HasMetadata object, KeyFailure failure) {
      return true;
    }

    @Override
    public String failureReason(String key) {
      return "Failed";
    }

    @Override
    public Stream<String> everything() {
      return Stream.empty();
    }

    @Override
    public Duration housekeeping(boolean leading) {
      return Duration.ofMinutes(1);
    }

    @Override
    public String logLabel(String key) {
      return "thing";
    }
  }

  private static ConfigMap object(String uid, String version) {
    return new ConfigMapBuilder()
        .withNewMetadata()
        .withName("snapcontent-1")
        .withUid(uid)
        .withResourceVersion(version)
        .endMetadata()
        .build();
  }

  private static final ConfigMap ASKED = object("uid-1", "10");

  private void runAll() {
    while (!tasks.isEmpty()) {
      tasks.remove(0).run();
    }
  }

  @Test
  void aSlowKeysStepRunsOffTheWorkerAndItsEndBringsTheKeyBack() {
    assertThat(work.work(SLOW, ASKED)).contains(Pace.LONGEST_LOOK);
    assertThat(worked).as("the look asked the storage nothing").isEmpty();
    assertThat(work.work(SLOW, ASKED))
        .as("a look while it waits starts nothing more")
        .contains(Pace.LONGEST_LOOK);
    assertThat(tasks).hasSize(1);
    assertThat(work.stepUnderWay(SLOW)).as("the looks so far made no progress").isTrue();

    runAll();
    assertThat(woken).containsExactly(SLOW);
    assertThat(work.stepUnderWay(SLOW)).as("its outcome not yet taken").isTrue();
    assertThat(work.work(SLOW, ASKED)).as("the step's own answer").contains(Duration.ofSeconds(2));
    assertThat(work.stepUnderWay(SLOW)).as("the look that took it made progress").isFalse();
    assertThat(worked).containsExactly(SLOW + " at uid-1/10");
    assertThat(unscheduled)
        .as("the look that started it left a delayed look, which the answer replaces")
        .containsExactly(SLOW);
  }

  /**
   * A step still waiting for a thread when its object changed (a deletion asked while a take
   * waited) is asked anew for the object as it is: the older one never runs.
   */
  @Test
  void aWaitingStepForAnOlderVersionIsAskedAnew() {
    ConfigMap deleting = object("uid-1", "11");
    work.work(SLOW, ASKED);
    assertThat(work.work(SLOW, deleting)).contains(Pace.LONGEST_LOOK);
    runAll();
    assertThat(worked).containsExactly(SLOW + " at uid-1/11");
    assertThat(work.work(SLOW, deleting)).contains(Duration.ofSeconds(2));
  }

  /**
   * A step that failed after writing its object (its error, to its status) is told and backed off
   * from: the failure is taken though the version moved, never discarded unseen.
   */
  @Test
  void aFailureIsTakenWhateverTheVersion() {
    answer =
        () -> {
          throw new ProvisioningException("Cinder refused the snapshot", false, null);
        };
    work.work(SLOW, ASKED);
    runAll();
    assertThatThrownBy(() -> work.work(SLOW, object("uid-1", "11")))
        .hasMessageContaining("Cinder refused");
    assertThat(unscheduled).containsExactly(SLOW);
  }

  /** A content that became ready while its step ran: the step after is the worker's own. */
  @Test
  void aStepDiscardedForAQuickObjectRunsOnTheWorker() {
    work.work(SLOW, ASKED);
    runAll();
    quickNow = true;
    assertThat(work.work(SLOW, object("uid-1", "11"))).contains(Duration.ofSeconds(2));
    assertThat(tasks).isEmpty();
    assertThat(worked).containsExactly(SLOW + " at uid-1/10", SLOW + " at uid-1/11");
  }

  /** One that runs already is not done twice at once: its end brings the key back. */
  @Test
  void aRunningStepIsNeverDoneTwiceAtOnce() {
    List<String> looks = new ArrayList<>();
    answer =
        () -> {
          looks.add("during: " + work.work(SLOW, object("uid-1", "11")));
          quickNow = true; // and, say, the content became ready meanwhile
          looks.add("quick: " + work.work(SLOW, object("uid-1", "12")));
          return Optional.empty();
        };
    work.work(SLOW, ASKED);
    runAll();
    assertThat(looks)
        .containsExactly(
            "during: " + Optional.of(Pace.LONGEST_LOOK),
            "quick: " + Optional.of(Pace.LONGEST_LOOK));
    assertThat(worked).containsExactly(SLOW + " at uid-1/10");
  }

  @Test
  void aQuickKeysStepRunsOnTheWorker() {
    answer = Optional::empty;
    assertThat(work.work(QUICK, ASKED)).isEmpty();
    assertThat(worked).containsExactly(QUICK + " at uid-1/10");
    assertThat(tasks).isEmpty();
  }

  /** What changed of the object between the look that asked and the look that takes. */
  enum Change {
    NOTHING(object("uid-1", "10"), true),
    ITS_VERSION(object("uid-1", "11"), false),
    THE_OBJECT_ITSELF(object("uid-2", "10"), false);

    final ConfigMap now;
    final boolean taken;

    Change(ConfigMap now, boolean taken) {
      this.now = now;
      this.taken = taken;
    }
  }

  /**
   * An outcome is the object's as it was asked for: a deletion asked while the step ran must not be
   * answered by the step that took the snapshot ("ready, nothing more to do").
   */
  @ParameterizedTest(name = "{0}")
  @EnumSource(Change.class)
  void anOutcomeIsTakenOnlyForTheObjectAsItWasAskedFor(Change change) {
    work.work(SLOW, ASKED);
    runAll();
    Optional<Duration> look = work.work(SLOW, change.now);
    if (change.taken) {
      assertThat(look).contains(Duration.ofSeconds(2));
      assertThat(tasks).isEmpty();
    } else {
      assertThat(look).as("asked again, for the object as it is").contains(Pace.LONGEST_LOOK);
      runAll();
      assertThat(work.work(SLOW, change.now)).contains(Duration.ofSeconds(2));
      assertThat(worked)
          .containsExactly(SLOW + " at uid-1/10", SLOW + " at " + PooledWork.version(change.now));
    }
  }

  /** What a step throws reaches the worker that takes it, an {@link Error} as it was. */
  @ParameterizedTest(name = "{0}")
  @EnumSource(Thrown.class)
  void whatAStepThrowsIsThrownToTheLookThatTakesIt(Thrown thrown) {
    answer =
        () -> {
          Throwable t = thrown.make();
          if (t instanceof Error e) {
            throw e;
          }
          throw (RuntimeException) t;
        };
    work.work(SLOW, ASKED);
    runAll();
    assertThatThrownBy(() -> work.work(SLOW, ASKED)).isInstanceOf(thrown.make().getClass());
    assertThat(work.work(SLOW, ASKED))
        .as("taken once: the next look asks again")
        .contains(Pace.LONGEST_LOOK);
  }

  enum Thrown {
    A_FAILURE,
    AN_ERROR;

    Throwable make() {
      return this == A_FAILURE
          ? new ProvisioningException("Cinder refused the snapshot", false, null)
          : new StackOverflowError("a bug deep down");
    }
  }

  @Test
  void aGoneObjectsWaitingStepNeverRuns() {
    answer = Optional::empty;
    work.work(SLOW, ASKED);
    assertThat(work.work(SLOW, null)).isEmpty();
    runAll();
    assertThat(worked).containsExactly(SLOW + " (gone)");
  }

  /**
   * A worker still at its key when this replica stopped leading: the step it asks for never runs,
   * and a running step's outcome is never taken; the first look after it leads again asks anew.
   */
  @Test
  void aReplicaThatStandsByStartsNothingAndTakesNoOutcome() {
    boolean[] leading = {true};
    answer =
        () -> {
          if (leading[0]) {
            leading[0] = false;
            work.standBy(); // the lead is lost while the step runs
          }
          return Optional.of(Duration.ofSeconds(2));
        };
    work.work(SLOW, ASKED);
    runAll();
    assertThat(work.work("content/snapcontent-2", ASKED))
        .as("asked while standing by: never runs")
        .isEmpty();
    runAll();
    assertThat(worked).containsExactly(SLOW + " at uid-1/10");

    work.act();
    assertThat(work.work(SLOW, ASKED))
        .as("the stale outcome is not taken: asked anew")
        .contains(Pace.LONGEST_LOOK);
    runAll();
    assertThat(work.work(SLOW, ASKED)).contains(Duration.ofSeconds(2));
    assertThat(worked).hasSize(2);
  }

  @Test
  void onAnInlinePoolEachStepRunsInTheLookThatAsks() {
    PooledWork<String> inline =
        new PooledWork<>(
            new Inner(),
            FairPool.inline(),
            (k, o) -> true,
            k -> "apps",
            woken::add,
            unscheduled::add,
            clock());
    assertThat(inline.work(SLOW, ASKED)).contains(Duration.ofSeconds(2));
    assertThat(woken).isEmpty();
  }
}
