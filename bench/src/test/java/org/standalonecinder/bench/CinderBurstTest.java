package org.standalonecinder.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The key histogram read as the bench reads it: the p99 bucket and the share within 50 ms. */
class CinderBurstTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "every key quick,                 100, 0,  5.0,  1.0",
    "one slow key in a hundred,        99, 1,  5.0,  0.99",
    "two slow keys in a hundred,       98, 2,  30000.0, 0.98",
  })
  void theP99BucketAndTheShareWithin50Ms(
      String name, int quick, int slow, double p99, double within) {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Timer t =
        Timer.builder("standalone_cinder_key_seconds")
            .tags("loop", "claims")
            .serviceLevelObjectives(
                Duration.ofMillis(5),
                Duration.ofMillis(10),
                Duration.ofMillis(50),
                Duration.ofSeconds(30))
            .register(registry);
    for (int i = 0; i < quick; i++) {
      t.record(2, TimeUnit.MILLISECONDS);
    }
    for (int i = 0; i < slow; i++) {
      t.record(20, TimeUnit.SECONDS);
    }
    var h = t.takeSnapshot();
    assertThat(CinderBurst.p99Ms(h)).isEqualTo(p99);
    assertThat(CinderBurst.within(h, 50)).isEqualTo(within);
  }
}
