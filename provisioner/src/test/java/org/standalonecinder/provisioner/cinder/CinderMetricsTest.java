package org.standalonecinder.provisioner.cinder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every Cinder call is timed with its outcome; a failure is counted and passed on unchanged. */
class CinderMetricsTest {

  static Stream<Arguments> outcomes() {
    return Stream.of(
        Arguments.of("answered", null, "ok"),
        Arguments.of(
            "not found",
            (Supplier<RuntimeException>) () -> new CinderException.NotFound("gone", "req-1"),
            "not_found"),
        Arguments.of(
            "Cinder down",
            (Supplier<RuntimeException>)
                () -> new CinderException.Unavailable("down", 503, "req-2", null),
            "unavailable"),
        Arguments.of(
            "over quota",
            (Supplier<RuntimeException>) () -> new CinderException.QuotaExceeded("quota", "req-3"),
            "quota_exceeded"),
        Arguments.of(
            "a bug of ours",
            (Supplier<RuntimeException>) () -> new IllegalStateException("oops"),
            "error"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("outcomes")
  void everyCallIsTimedWithItsOutcome(
      String name, Supplier<RuntimeException> failure, String outcome) {
    FakeCinderClient fake = new FakeCinderClient();
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    CinderClient cinder = CinderMetrics.wrap(fake, registry);
    if (failure == null) {
      cinder.getVolume("vol-x");
    } else {
      RuntimeException thrown = failure.get();
      fake.failNext("getVolume", () -> thrown);
      assertThatThrownBy(() -> cinder.getVolume("vol-x"))
          .as("passed on as it was")
          .isSameAs(thrown);
    }
    var timer =
        registry
            .find(CinderMetrics.METRIC)
            .tags("operation", "getVolume", "outcome", outcome)
            .timer();
    assertThat(timer).as("a series for " + outcome).isNotNull();
    assertThat(timer.count()).isEqualTo(1);
    assertThat(registry.find(CinderMetrics.METRIC).timers()).hasSize(1);
  }
}
