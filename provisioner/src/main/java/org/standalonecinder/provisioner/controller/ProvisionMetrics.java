package org.standalonecinder.provisioner.controller;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;

/**
 * Provisioning attempts by kind and result, and how long the successful ones took: {@code
 * standalone_cinder_provisions_total{kind=blank|clone|restore, result=succeeded|failed|refused}}
 * (refused: a final failure such as a clone into a class without smartclone; failed: retried) and
 * {@code standalone_cinder_provision_seconds{kind}}. The webhook counts the clones it denies, by
 * rule.
 */
final class ProvisionMetrics {

  private final MeterRegistry registry;

  ProvisionMetrics(MeterRegistry registry) {
    this.registry = registry;
    // Every series at 0 from the start: a rate over the first failure is then a rate (not a
    // series that appears from nothing), and dashboards and alerts find each name at once.
    for (String what : new String[] {"claim", "volume"}) {
      failures(what, false);
      failures(what, true);
    }
    for (String kind : new String[] {"blank", "clone", "restore"}) {
      for (String result : new String[] {"succeeded", "failed", "refused"}) {
        provisions(kind, result);
      }
    }
  }

  private Counter failures(String what, boolean gaveUp) {
    return Counter.builder(gaveUp ? "standalone_cinder_gave_up" : "standalone_cinder_retries")
        .description(
            gaveUp
                ? "items given up (a final failure, or too many attempts)"
                : "failed attempts that are retried with backoff")
        .tags("what", what)
        .register(registry);
  }

  private Counter provisions(String kind, String result) {
    return Counter.builder("standalone_cinder_provisions")
        .description("provisioning attempts by kind and result")
        .tags("kind", kind, "result", result)
        .register(registry);
  }

  /** The queue's depth, read at each scrape. */
  void queue(java.util.function.IntSupplier depth) {
    io.micrometer.core.instrument.Gauge.builder("standalone_cinder_queue_depth", depth::getAsInt)
        .description("claims and volumes waiting for a worker")
        .register(registry);
  }

  /**
   * A failed attempt of a claim ({@code what=claim}) or volume: retried, or given up ({@code
   * standalone_cinder_gave_up_total}).
   */
  void failed(String what, boolean gaveUp) {
    failures(what, gaveUp).increment();
  }

  void provisioned(String kind, String result, long nanos) {
    provisions(kind, result).increment();
    if ("succeeded".equals(result)) {
      Timer.builder("standalone_cinder_provision_seconds")
          .description("time from the first look at a claim to its PV, successful provisionings")
          .tags("kind", kind)
          .publishPercentileHistogram()
          .register(registry)
          .record(nanos, TimeUnit.NANOSECONDS);
    }
  }
}
