package org.standalonecinder.provisioner.controller;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;

/**
 * Provisioning attempts by kind and result, and how long the successful ones took: {@code
 * standalone_cinder_provisions_total{kind=blank|clone, result=succeeded|failed|refused}} (refused:
 * a final failure such as a clone into a class without smartclone; failed: retried) and {@code
 * standalone_cinder_provision_seconds{kind}}. The webhook counts the clones it denies, by rule.
 */
final class ProvisionMetrics {

  private final MeterRegistry registry;

  ProvisionMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  void provisioned(boolean clone, String result, long nanos) {
    String kind = clone ? "clone" : "blank";
    Counter.builder("standalone_cinder_provisions")
        .description("provisioning attempts by kind and result")
        .tags("kind", kind, "result", result)
        .register(registry)
        .increment();
    if ("succeeded".equals(result)) {
      Timer.builder("standalone_cinder_provision_seconds")
          .description("time from the first Cinder call to the PV, successful attempts")
          .tags("kind", kind)
          .publishPercentileHistogram()
          .register(registry)
          .record(nanos, TimeUnit.NANOSECONDS);
    }
  }
}
