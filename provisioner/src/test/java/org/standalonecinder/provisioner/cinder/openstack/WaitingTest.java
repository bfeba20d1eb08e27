package org.standalonecinder.provisioner.cinder.openstack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderException;

/** A client's waits: each as quick as its backoff alone, all together gentle with Cinder. */
class WaitingTest {

  /**
   * The last column: how many looks a second the waits make together at most. 40 while the spread
   * sets the pace; past 200 waits the cap of 5 s between looks wins, so that no claim is seen more
   * than 5 s late.
   */
  @ParameterizedTest(name = "{0}: look {1}, {2} waits in progress: {3} ms")
  @CsvSource(
      delimiter = '|',
      value = {
        "one claim alone                               |  0 |    1 |  100 |  10",
        "one claim alone: its eleventh look            | 10 |    1 |  931 |   2",
        "four copies and a claim                       |  0 |    5 |  125 |  40",
        "four copies and a claim: later                |  6 |    5 |  381 |  14",
        "the claim loop's 16 step threads, all waiting |  0 |   16 |  400 |  40",
        "a client with a hundred waits (the bench's)   |  0 |  100 | 2500 |  40",
        "a hundred waits, late in them                 | 18 |  100 | 5000 |  20",
        "a thousand: never past the cap                |  0 | 1000 | 5000 | 200",
        "none counted                                  |  0 |    0 |  100 |   0",
      })
  void eachWaitLooksAsItsBackoffSaysButAllTogetherGently(
      String what, int attempt, int waits, long ms, double together) {
    Duration d = Waiting.delay(Backoff.DEFAULT, attempt, waits);
    assertThat(d).as(what).isEqualTo(Duration.ofMillis(ms));
    assertThat(waits / (d.toNanos() / 1e9))
        .as(what + ": looks a second, together")
        .isLessThanOrEqualTo(together);
  }

  /** A wait counts while it runs, and stops counting however it ends. */
  @Test
  void aWaitCountsWhileItRunsAndNeverAfter() {
    Waiting waits = new Waiting();
    Backoff quick =
        new Backoff(Duration.ofMillis(1), 1, Duration.ofMillis(1), Duration.ofSeconds(5));
    List<Integer> seen = new ArrayList<>();
    List<String> statuses = new ArrayList<>(List.of("creating", "creating", "available"));
    assertThat(
            waits.forStatus(
                "volume v",
                Set.of("available"),
                quick,
                () -> {
                  seen.add(waits.inProgress());
                  return Optional.of(statuses.remove(0));
                },
                s -> s,
                s -> null))
        .isEqualTo("available");
    assertThat(seen).containsExactly(1, 1, 1);
    assertThat(waits.inProgress()).isZero();

    assertThatThrownBy(
            () ->
                waits.forGone(
                    "volume v",
                    quick,
                    () -> {
                      throw new CinderException.Unavailable("cinder down", 503, null, null);
                    },
                    s -> "",
                    s -> null))
        .isInstanceOf(CinderException.Unavailable.class);
    assertThat(waits.inProgress()).as("after a wait that threw").isZero();
  }
}
