package org.standalonecinder.provisioner.app;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.provisioner.cinder.Capacity;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.Pool;

/**
 * The backend's capacity as Cinder's scheduler sees it, refreshed on an interval: {@code
 * standalone_cinder_pool_capacity_gib{pool, backend, protocol, kind=total|free|allocated|
 * provisioned}} ({@code +Inf} for a pool that reports "infinite", NaN for "unknown"), {@code
 * standalone_cinder_pool_max_over_subscription_ratio{pool}}, and {@code standalone_cinder_pools_up}
 * (0 while Cinder will not list its pools: the call is admin-only by default policy). A pool that
 * disappears loses its series.
 */
final class PoolMetrics implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(PoolMetrics.class);

  private final CinderClient cinder;
  private final MultiGauge capacity;
  private final MultiGauge ratio;
  private volatile int up;
  private volatile String lastProblem;
  private ScheduledExecutorService timer;

  PoolMetrics(CinderClient cinder, MeterRegistry registry) {
    this.cinder = cinder;
    this.capacity =
        MultiGauge.builder("standalone_cinder_pool_capacity_gib")
            .description("capacity of Cinder's pools as the scheduler last heard it")
            .register(registry);
    this.ratio =
        MultiGauge.builder("standalone_cinder_pool_max_over_subscription_ratio")
            .description("how far a thin pool's provisioned capacity may exceed its total")
            .register(registry);
    Gauge.builder("standalone_cinder_pools_up", this, m -> m.up)
        .description("1 when the last listing of Cinder's pools succeeded")
        .register(registry);
  }

  /** The value of a capacity: GiB, +Inf for "infinite", NaN for "unknown". */
  static double value(Capacity c) {
    if (c instanceof Capacity.Gib g) {
      return g.value();
    }
    return c instanceof Capacity.Infinite ? Double.POSITIVE_INFINITY : Double.NaN;
  }

  /** Lists the pools once and replaces every series. */
  void refresh() {
    List<Pool> pools;
    try {
      pools = cinder.pools();
    } catch (RuntimeException e) {
      up = 0;
      if (!String.valueOf(e.getMessage()).equals(lastProblem)) {
        lastProblem = String.valueOf(e.getMessage());
        LOG.info("cannot list Cinder's pools for the capacity metrics: {}", lastProblem);
      }
      return;
    }
    lastProblem = null;
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    List<MultiGauge.Row<?>> ratios = new ArrayList<>();
    for (Pool p : pools) {
      Tags tags =
          Tags.of(
              "pool", p.name(),
              "backend", String.valueOf(p.backendName()),
              "protocol", String.valueOf(p.storageProtocol()));
      rows.add(MultiGauge.Row.of(tags.and("kind", "total"), value(p.total())));
      rows.add(MultiGauge.Row.of(tags.and("kind", "free"), value(p.free())));
      rows.add(MultiGauge.Row.of(tags.and("kind", "allocated"), value(p.allocated())));
      rows.add(MultiGauge.Row.of(tags.and("kind", "provisioned"), value(p.provisioned())));
      if (p.maxOverSubscriptionRatio() != null) {
        ratios.add(MultiGauge.Row.of(Tags.of("pool", p.name()), p.maxOverSubscriptionRatio()));
      }
    }
    capacity.register(rows, true);
    ratio.register(ratios, true);
    up = 1;
  }

  /** Refreshes now and then every {@code interval}, on a thread of its own. */
  void start(Duration interval) {
    timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "pool-metrics");
              t.setDaemon(true);
              return t;
            });
    timer.scheduleWithFixedDelay(this::refresh, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public void close() {
    if (timer != null) {
      timer.shutdownNow();
    }
  }
}
