package org.standalonecinder.webhook.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The webhook's first calls to the API server at start: a Pod on a busy node whose first connection
 * timed out exited and counted a restart. An outage the API server recovers from is waited out,
 * within the patience; a refusal is not.
 */
class StartupCallsTest {

  private static final Duration PATIENCE = Duration.ofSeconds(90);

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          # case                                             | code | failures | attempts | starts
          a connection that timed out, then an answer        | -1   | 1        | 2        | true
          the API server's 503 three times, then an answer   | 503  | 3        | 4        | true
          throttled (429), then an answer                    | 429  | 2        | 3        | true
          a refusal (403) is no outage: thrown at once       | 403  | 1        | 1        | false
          a 404 is thrown at once                            | 404  | 1        | 1        | false
          no answer for longer than the patience: thrown     | -1   | 100      | 15       | false
          """)
  void theStartWaitsOutWhatPasses(String name, int code, int failures, int attempts, boolean starts)
      throws Exception {
    AtomicLong now = new AtomicLong();
    List<Duration> pauses = new ArrayList<>();
    StartupCalls calls =
        new StartupCalls(
            PATIENCE,
            now::get,
            d -> {
              pauses.add(d);
              now.addAndGet(d.toNanos());
            });
    AtomicInteger tried = new AtomicInteger();
    StartupCalls.Call<String> call =
        () -> {
          if (tried.incrementAndGet() <= failures) {
            throw code == -1
                ? new KubernetesClientException(
                    "The timeout of 2000 ms has been exceeded", new TimeoutException())
                : new KubernetesClientException("status " + code, code, null);
          }
          return "keys";
        };
    if (starts) {
      assertThat(calls.run("the clone token key", call)).isEqualTo("keys");
    } else {
      assertThatThrownBy(() -> calls.run("the clone token key", call))
          .isInstanceOf(KubernetesClientException.class);
    }
    assertThat(tried).as("attempts").hasValue(attempts);
    assertThat(pauses.stream().reduce(Duration.ZERO, Duration::plus))
        .as("waited no longer than the patience")
        .isLessThanOrEqualTo(PATIENCE);
    assertThat(pauses).as("pauses grow and stay short").allMatch(d -> d.toSeconds() <= 8);
  }
}
