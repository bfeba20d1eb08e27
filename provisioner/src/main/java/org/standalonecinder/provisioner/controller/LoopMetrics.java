package org.standalonecinder.provisioner.controller;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The engine's own metrics, by loop ({@code claims}, {@code snapshots}): {@code
 * standalone_cinder_workers_replaced_total{loop}}, workers that died and were replaced (stays 0),
 * and {@code standalone_cinder_key_seconds{loop}}, how long a worker held a key — what says whether
 * any step waits on a worker. A loop whose slow steps run on a {@link FairPool} also has {@code
 * standalone_cinder_steps_waiting{loop}}, {@code standalone_cinder_steps_running{loop}} and {@code
 * standalone_cinder_steps_oldest_wait_seconds{loop}}: whether its steps wait for a thread, and how
 * long. They are not by namespace, so that no tenant adds a series.
 */
public final class LoopMetrics {

  private final MeterRegistry registry;

  public LoopMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  /** Every series of a loop at 0 from the start, so dashboards and alerts find each at once. */
  void register(String loop) {
    replaced(loop);
    held(loop);
  }

  private Counter replaced(String loop) {
    return Counter.builder("standalone_cinder_workers_replaced")
        .description("workers that died and were replaced (should stay 0)")
        .tags("loop", loop)
        .register(registry);
  }

  private Timer held(String loop) {
    return Timer.builder("standalone_cinder_key_seconds")
        .description("how long a worker held a key, from taking it to done")
        .tags("loop", loop)
        .serviceLevelObjectives(
            Duration.ofMillis(5),
            Duration.ofMillis(10),
            Duration.ofMillis(50),
            Duration.ofMillis(100),
            Duration.ofMillis(500),
            Duration.ofSeconds(1),
            Duration.ofSeconds(5),
            Duration.ofSeconds(30),
            Duration.ofMinutes(2),
            Duration.ofMinutes(10))
        .register(registry);
  }

  /** The gauges of the pool {@code loop}'s slow steps run on. */
  public void steps(String loop, FairPool pool) {
    Gauge.builder("standalone_cinder_steps_waiting", pool, FairPool::waiting)
        .description("slow steps (Cinder's) waiting for a thread of their pool")
        .tags("loop", loop)
        .register(registry);
    Gauge.builder("standalone_cinder_steps_running", pool, FairPool::running)
        .description("slow steps (Cinder's) running on their pool")
        .tags("loop", loop)
        .register(registry);
    Gauge.builder(
            "standalone_cinder_steps_oldest_wait_seconds",
            pool,
            p -> p.oldestWait().toNanos() / 1e9)
        .description("how long the slow step waiting longest for a thread has waited")
        .tags("loop", loop)
        .baseUnit("seconds")
        .register(registry);
  }

  void workerReplaced(String loop) {
    replaced(loop).increment();
  }

  long workersReplaced(String loop) {
    return (long) replaced(loop).count();
  }

  void held(String loop, long nanos) {
    held(loop).record(nanos, TimeUnit.NANOSECONDS);
  }
}
