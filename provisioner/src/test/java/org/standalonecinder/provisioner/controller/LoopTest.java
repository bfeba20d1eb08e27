package org.standalonecinder.provisioner.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The engine every loop runs on, with a scripted loop (no Kubernetes, no Cinder): what each answer
 * of a key's work does, and what a dying worker, a standby and a 409 do.
 */
class LoopTest {

  private static final RetryPolicy RETRY =
      new RetryPolicy(Duration.ofMillis(20), Duration.ofMillis(40), 3);

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final LoopMetrics metrics = new LoopMetrics(registry);
  private final List<Engine> engines = new ArrayList<>();

  @AfterEach
  void close() {
    engines.forEach(Engine::close);
  }

  /** What a scripted look answers for "a step started off the workers" (and nothing else does). */
  static final Duration STEP_STARTED = Duration.ofMillis(10).plusNanos(1);

  /** A loop whose work on a key is what the test scripts for it; "ns/name" keys. */
  static final class Scripted implements LoopWork<String>, Engine.Part {
    final Map<String, Function<Integer, Optional<Duration>>> script = new ConcurrentHashMap<>();
    final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();
    final Map<String, AtomicInteger> lookUps = new ConcurrentHashMap<>();
    final List<String> told = new CopyOnWriteArrayList<>();
    final Map<String, Boolean> underWay = new ConcurrentHashMap<>();
    final AtomicInteger housekept = new AtomicInteger();
    final Loop<String> loop;

    Scripted(String name, int workers, LoopMetrics metrics) {
      loop = new Loop<>(name, workers, RETRY, k -> k.substring(0, k.indexOf('/')), this, metrics);
    }

    int attempts(String key) {
      AtomicInteger n = attempts.get(key);
      return n == null ? 0 : n.get();
    }

    @Override
    public HasMetadata lookUp(String key) {
      lookUps.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
      if (key.endsWith("lookup-throws")) {
        throw new IllegalStateException("cache broken");
      }
      if (key.endsWith("lookup-error")) {
        throw new StackOverflowError();
      }
      return new ConfigMapBuilder().withNewMetadata().withName(key).endMetadata().build();
    }

    @Override
    public Optional<Duration> work(String key, HasMetadata object) {
      int n = attempts.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
      underWay.put(key, false);
      Optional<Duration> again = script.getOrDefault(key, i -> Optional.empty()).apply(n);
      underWay.put(key, again.equals(Optional.of(STEP_STARTED)));
      return again;
    }

    @Override
    public boolean stepUnderWay(String key) {
      return underWay.getOrDefault(key, false);
    }

    @Override
    public boolean tell(String key, HasMetadata object, KeyFailure f) {
      if (key.endsWith("tell-throws")) {
        throw new IllegalStateException("events broken");
      }
      told.add(key + " " + f.reason() + ": " + f.note());
      return true;
    }

    @Override
    public String failureReason(String key) {
      return "Failed";
    }

    @Override
    public Stream<String> everything() {
      return Stream.of("a/every", "b/every");
    }

    @Override
    public Duration housekeeping(boolean leading) {
      if (leading) {
        housekept.incrementAndGet();
      }
      return Duration.ofHours(1);
    }

    @Override
    public String logLabel(String key) {
      return "key";
    }

    @Override
    public Loop<?> loop() {
      return loop;
    }
  }

  private Scripted[] started(String... names) {
    Scripted[] loops = new Scripted[names.length];
    for (int i = 0; i < names.length; i++) {
      loops[i] = new Scripted(names[i], 2, metrics);
    }
    Engine engine = new Engine(List.of(loops));
    engines.add(engine);
    engine.start();
    return loops;
  }

  private static void await(String what, java.util.function.BooleanSupplier done) {
    Cluster.await(what, done, Duration.ofSeconds(10));
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> void sneaky(Throwable t) throws T {
    throw (T) t;
  }

  /** What a key's work answers, and what the engine then does. */
  record Answer(
      String name, Function<Integer, Optional<Duration>> work, int attempts, List<String> told) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Arguments> answers() {
    return Stream.of(
            new Answer("done: worked on once", n -> Optional.empty(), 1, List.of()),
            new Answer(
                "look again: worked on until it is done",
                n -> n < 3 ? Optional.of(Duration.ofMillis(10)) : Optional.empty(),
                3,
                List.of()),
            new Answer(
                "a final failure: told once, not retried",
                n -> {
                  throw ProvisioningException.invalid("bad parameter");
                },
                1,
                List.of("a/k Failed: bad parameter")),
            new Answer(
                "a failure told with its own reason",
                n -> {
                  throw ProvisioningException.invalid("too big").toldAs("VolumeResizeFailed");
                },
                1,
                List.of("a/k VolumeResizeFailed: too big")),
            new Answer(
                "a failure retried until the policy gives up",
                n -> {
                  throw new IllegalStateException("down");
                },
                3,
                List.of(
                    "a/k Failed: java.lang.IllegalStateException: down",
                    "a/k Failed: java.lang.IllegalStateException: down",
                    "a/k Failed: java.lang.IllegalStateException: down (gave up after 3 attempts;"
                        + " will try again at the next change or resync)")),
            new Answer(
                "progress between failures does not start the count over: it still gives up",
                n -> {
                  if (n % 2 == 1) {
                    throw new IllegalStateException("export fails");
                  }
                  return Optional.of(Duration.ofMillis(10)); // under way again
                },
                5,
                List.of(
                    "a/k Failed: java.lang.IllegalStateException: export fails",
                    "a/k Failed: java.lang.IllegalStateException: export fails",
                    "a/k Failed: java.lang.IllegalStateException: export fails (gave up after 3"
                        + " attempts; will try again at the next change or resync)")),
            new Answer(
                "an Error fails the key alone, retried like a failure",
                n -> {
                  sneaky(new StackOverflowError());
                  return Optional.empty();
                },
                3,
                List.of(
                    "a/k Failed: internal error: java.lang.StackOverflowError",
                    "a/k Failed: internal error: java.lang.StackOverflowError",
                    "a/k Failed: internal error: java.lang.StackOverflowError (gave up after 3"
                        + " attempts; will try again at the next change or resync)")),
            new Answer(
                "a 409 is looked at again at once, and nobody is told",
                n -> {
                  if (n < 4) {
                    throw new KubernetesClientException("conflict", 409, null);
                  }
                  return Optional.empty();
                },
                4,
                List.of()),
            new Answer(
                "a step started, then a 409, over and over: the looks that start it do not start"
                    + " the count over, and it backs off like a failure",
                n -> {
                  if (n % 2 == 1) {
                    return Optional.of(STEP_STARTED);
                  }
                  throw new KubernetesClientException("conflict", 409, null);
                },
                2 * (Loop.CONFLICTS_BEFORE_BACKOFF + 2),
                List.of(
                    "a/k Failed: io.fabric8.kubernetes.client.KubernetesClientException: conflict",
                    "a/k Failed: io.fabric8.kubernetes.client.KubernetesClientException: conflict",
                    "a/k Failed: io.fabric8.kubernetes.client.KubernetesClientException: conflict"
                        + " (gave up after 3 attempts; will try again at the next change or"
                        + " resync)")),
            new Answer(
                "progress between 409s ends their run: never a failure",
                n -> {
                  if (n > 3 * Loop.CONFLICTS_BEFORE_BACKOFF) {
                    return Optional.empty();
                  }
                  if (n % 2 == 1) {
                    return Optional.of(Duration.ofMillis(10)); // a step of the work done
                  }
                  throw new KubernetesClientException("conflict", 409, null);
                },
                3 * Loop.CONFLICTS_BEFORE_BACKOFF + 1,
                List.of()),
            new Answer(
                "a key changed under every write backs off like a failure",
                n -> {
                  throw new KubernetesClientException("conflict", 409, null);
                },
                Loop.CONFLICTS_BEFORE_BACKOFF + 2,
                List.of(
                    "a/k Failed: io.fabric8.kubernetes.client.KubernetesClientException: conflict",
                    "a/k Failed: io.fabric8.kubernetes.client.KubernetesClientException: conflict",
                    "a/k Failed: io.fabric8.kubernetes.client.KubernetesClientException: conflict"
                        + " (gave up after 3 attempts; will try again at the next change or"
                        + " resync)")))
        .map(Arguments::of);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("answers")
  void theEngineDoesWhatTheWorkAnswers(Answer row) throws InterruptedException {
    Scripted loop = started("claims")[0];
    loop.script.put("a/k", row.work());
    loop.loop.add("a/k");
    await(
        row.attempts() + " attempts, " + row.told().size() + " told",
        () ->
            loop.attempts("a/k") >= row.attempts()
                && loop.told.size() >= row.told().size()
                && !loop.loop.scheduled("a/k")
                && !loop.loop.waiting("a/k"));
    // Nothing more comes: no retry or look again is pending, and none runs late.
    Thread.sleep(100);
    assertThat(loop.attempts("a/k")).isEqualTo(row.attempts());
    assertThat(loop.told).containsExactlyElementsOf(row.told());
    assertThat(loop.loop.workersAlive()).isEqualTo("2 of 2 workers alive (0 replaced)");
  }

  /**
   * A worker of each loop made to die (what gets past a key's own handling: here the loop's
   * listener throws an Error once): it is replaced, the metric and {@code /healthz}'s words name
   * that loop, and keys of both loops go on being worked on.
   */
  @ParameterizedTest(name = "a worker of the {0} loop dies")
  @ValueSource(strings = {"claims", "snapshots"})
  void aWorkerThatDiesIsReplacedAndNamedByItsLoop(String dying) {
    Scripted[] loops = started("claims", "snapshots");
    Engine engine = engines.get(0);
    Scripted victim = dying.equals("claims") ? loops[0] : loops[1];
    AtomicBoolean once = new AtomicBoolean();
    victim.loop.onProcessed(
        (k, o) -> {
          if (once.compareAndSet(false, true)) {
            sneaky(new StackOverflowError());
          }
        });
    victim.loop.add("a/first");
    await(
        "a worker replaced",
        () -> victim.loop.workersAlive().equals("2 of 2 workers alive (1 replaced)"));
    String other = dying.equals("claims") ? "snapshots" : "claims";
    assertThat(engine.workersAlive())
        .contains(dying + ": 2 of 2 workers alive (1 replaced)")
        .contains(other + ": 2 of 2 workers alive (0 replaced)");
    assertThat(engine.healthy()).isTrue();
    assertThat(
            registry.get("standalone_cinder_workers_replaced").tag("loop", dying).counter().count())
        .isEqualTo(1);
    assertThat(
            registry.get("standalone_cinder_workers_replaced").tag("loop", other).counter().count())
        .isZero();
    for (Scripted s : loops) {
      for (int i = 0; i < 4; i++) {
        s.loop.add("b/after-" + i);
      }
    }
    await(
        "every later key worked on",
        () ->
            Stream.of(loops)
                .allMatch(
                    s -> Stream.of(0, 1, 2, 3).allMatch(i -> s.attempts("b/after-" + i) == 1)));
  }

  /** What a stuck worker or step does with the interrupt at the stop's deadline. */
  enum Stuck {
    HEEDS_THE_INTERRUPT(0),
    IGNORES_IT(6);

    final int left;

    Stuck(int left) {
      this.left = left;
    }
  }

  /**
   * A stop of every loop ends by one deadline, however much of each is stuck: here every worker of
   * two loops is at a key, and each loop's pool runs a step, all past the deadline. Closed one by
   * one, each worker joined for its own time and each pool for its own grace, it would take many
   * times the deadline. It says how many still run, so that the Lease is not handed on while they
   * may act.
   */
  @ParameterizedTest(name = "a stuck worker or step that {0}")
  @EnumSource(Stuck.class)
  void aStopEndsByOneDeadlineHoweverManyWorkersAndStepsAreStuck(Stuck how)
      throws InterruptedException {
    AtomicBoolean release = new AtomicBoolean();
    java.util.concurrent.CountDownLatch stuck = new java.util.concurrent.CountDownLatch(6);
    Runnable stick =
        () -> {
          stuck.countDown();
          while (!release.get()) {
            if (Thread.interrupted() && how == Stuck.HEEDS_THE_INTERRUPT) {
              return;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
          }
        };
    List<Engine.Part> parts = new ArrayList<>();
    List<Scripted> loops = new ArrayList<>();
    for (String name : List.of("claims", "snapshots")) {
      Scripted s = new Scripted(name, 2, metrics);
      loops.add(s);
      FairPool pool = FairPool.ofThreads(2, name + "-steps");
      s.script.put(
          "a/stuck-0",
          n -> {
            stick.run();
            return Optional.empty();
          });
      s.script.put("a/stuck-1", s.script.get("a/stuck-0"));
      parts.add(
          new Engine.Part() {
            @Override
            public Loop<?> loop() {
              return s.loop;
            }

            @Override
            public int close(Deadline by) {
              return s.loop.close(by) + pool.close(by);
            }
          });
      pool.submit("a", stick, e -> {});
    }
    Engine engine = new Engine(parts);
    engine.start();
    for (Scripted s : loops) {
      s.loop.add("a/stuck-0");
      s.loop.add("a/stuck-1");
    }
    try {
      assertThat(stuck.await(10, java.util.concurrent.TimeUnit.SECONDS)).as("all stuck").isTrue();
      long began = System.nanoTime();
      int left = engine.close(Deadline.after(Duration.ofSeconds(1)));
      Duration took = Duration.ofNanos(System.nanoTime() - began);
      assertThat(took).as("one deadline for all of it").isLessThan(Duration.ofMillis(3000));
      assertThat(left).as("still running, told to the caller").isEqualTo(how.left);
    } finally {
      release.set(true);
    }
  }

  /** A standby holds what arrives; leading, it looks at everything and runs the housekeeping. */
  @Test
  void aStandbyHoldsItsKeysAndLooksAtEverythingOnceItLeads() throws InterruptedException {
    Scripted loop = new Scripted("claims", 2, metrics);
    Engine engine = new Engine(List.of(loop));
    engines.add(engine);
    engine.pause();
    engine.start();
    loop.loop.add("a/arrived");
    await("the standby holds a/arrived", () -> loop.loop.waiting("a/arrived"));
    Thread.sleep(200); // what a standby that acted would have done by now
    assertThat(loop.attempts("a/arrived")).isZero();
    assertThat(loop.housekept).hasValue(0);
    engine.resume();
    await(
        "everything worked on and the housekeeping run",
        () ->
            Stream.of("a/arrived", "a/every", "b/every").allMatch(k -> loop.attempts(k) == 1)
                && loop.housekept.get() >= 1);
  }

  /** How long a worker held each key goes to the loop's histogram. */
  @Test
  void everyKeyHeldIsTimedByItsLoop() {
    Scripted loop = started("snapshots")[0];
    for (int i = 0; i < 5; i++) {
      loop.loop.add("a/" + i);
    }
    await(
        "five keys worked on",
        () -> Stream.of(0, 1, 2, 3, 4).allMatch(i -> loop.attempts("a/" + i) == 1));
    await(
        "five keys timed",
        () ->
            registry.get("standalone_cinder_key_seconds").tag("loop", "snapshots").timer().count()
                == 5);
  }

  /** What the loop itself throws, or a key it cannot place: the key's alone, no worker lost. */
  record Broken(String name, String key, int lookUps, int attempts) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Arguments> broken() {
    return Stream.of(
            new Broken("a look-up that throws is retried until given up", "a/lookup-throws", 3, 0),
            new Broken("a look-up that throws an Error, the same", "a/lookup-error", 3, 0),
            new Broken(
                "a failure that cannot be told is still retried until given up",
                "a/tell-throws",
                3,
                3),
            new Broken("a key whose line cannot be told waits in the common one", "noslash", 1, 1))
        .map(Arguments::of);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("broken")
  void whatTheLoopThrowsFailsTheKeyAlone(Broken row) throws InterruptedException {
    Scripted loop = started("claims")[0];
    if (row.key().endsWith("tell-throws")) {
      loop.script.put(
          row.key(),
          n -> {
            throw new IllegalStateException("down");
          });
    }
    loop.loop.add(row.key());
    await(
        row.lookUps() + " look-ups",
        () -> {
          AtomicInteger n = loop.lookUps.get(row.key());
          return n != null && n.get() >= row.lookUps() && !loop.loop.scheduled(row.key());
        });
    Thread.sleep(100);
    assertThat(loop.lookUps.get(row.key())).hasValue(row.lookUps());
    assertThat(loop.attempts(row.key())).isEqualTo(row.attempts());
    assertThat(loop.loop.workersAlive()).isEqualTo("2 of 2 workers alive (0 replaced)");
    loop.loop.add("b/after");
    await("a later key worked on", () -> loop.attempts("b/after") == 1);
  }
}
