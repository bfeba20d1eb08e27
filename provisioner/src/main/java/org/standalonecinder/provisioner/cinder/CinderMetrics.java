package org.standalonecinder.provisioner.cinder;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Every Cinder call of the provisioner, counted and timed: {@code
 * standalone_cinder_cinder_request_seconds{operation, outcome}} with a latency histogram. The
 * outcome is {@code ok} or the failure's kind ({@code not_found}, {@code unavailable}, {@code
 * quota_exceeded}, ...): few values, so the series stay few. The waits ({@code await*}) are timed
 * whole, polls included.
 */
public final class CinderMetrics {

  static final String METRIC = "standalone_cinder_cinder_request_seconds";

  // Asked once and then remembered by the adapter, or no request at all: not worth a series.
  private static final Set<String> UNTIMED = Set.of("apiVersions", "close");

  private CinderMetrics() {}

  /** {@code cinder} with every call timed into {@code registry}. */
  public static CinderClient wrap(CinderClient cinder, MeterRegistry registry) {
    return CinderDecorator.wrap(
        cinder,
        (operation, args, call) ->
            UNTIMED.contains(operation) ? call.proceed() : timed(registry, operation, call));
  }

  /** The outcome tag of a failure: its kind in snake case, {@code error} for anything else. */
  static String outcome(RuntimeException e) {
    if (e instanceof CinderException) {
      return e.getClass()
          .getSimpleName()
          .replaceAll("([a-z])([A-Z])", "$1_$2")
          .toLowerCase(Locale.ROOT);
    }
    return "error";
  }

  private static Object timed(MeterRegistry registry, String operation, CinderDecorator.Call call) {
    long start = System.nanoTime();
    String outcome = "ok";
    try {
      return call.proceed();
    } catch (RuntimeException e) {
      outcome = outcome(e);
      throw e;
    } finally {
      Timer.builder(METRIC)
          .description("Cinder calls by operation and outcome")
          .tags("operation", operation, "outcome", outcome)
          .publishPercentileHistogram()
          .register(registry)
          .record(System.nanoTime() - start, TimeUnit.NANOSECONDS);
    }
  }
}
