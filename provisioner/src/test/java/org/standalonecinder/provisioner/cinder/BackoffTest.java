package org.standalonecinder.provisioner.cinder;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class BackoffTest {

  /**
   * When a poll with {@link Backoff#DEFAULT} first sees what ended after {@code endsMs}, and how
   * many looks it took: how late a claim's user learns of it, and what it cost Cinder's API.
   */
  @ParameterizedTest(name = "{0}: ends at {1} ms, seen at most {2} ms late, in at most {3} looks")
  @CsvSource({
    "a create of the unloaded lab,         600,  250,  10",
    "a create under a copy's load,        6400, 1700,  20",
    "the create CI saw late,             13000, 3400,  24",
    "a clone of a few gigabytes,         60000, 5000,  32",
    "a copy near the create's deadline, 290000, 5000,  78",
  })
  void aWaitIsSeenAtMostAQuarterOfItsLengthLateAndCostsFewLooks(
      String what, long endsMs, long lateAtMostMs, int looksAtMost) {
    Backoff b = Backoff.DEFAULT;
    long at = 0;
    int looks = 1; // the look before the first wait
    for (int attempt = 0; at < endsMs; attempt++) {
      at += b.delay(attempt).toMillis();
      looks++;
    }
    assertThat(at - endsMs).as(what + ": how late").isLessThanOrEqualTo(lateAtMostMs);
    assertThat(looks).as(what + ": looks").isLessThanOrEqualTo(looksAtMost);
  }

  /** Every end from 0.1 s to the deadline, 10 ms apart: the rows above are not lucky points. */
  @org.junit.jupiter.api.Test
  void noEndIsSeenLaterThanAQuarterOfItsTimePlusTheFirstWaitNorLaterThanTheCap() {
    Backoff b = Backoff.DEFAULT;
    long at = 0;
    int attempt = 0;
    for (long ends = 100; ends <= b.deadline().toMillis(); ends += 10) {
      while (at < ends) {
        at += b.delay(attempt++).toMillis();
      }
      long late = at - ends;
      assertThat(late)
          .as("ends at %d ms, seen at %d ms", ends, at)
          .isLessThanOrEqualTo(Math.min(b.max().toMillis(), ends / 4 + b.initial().toMillis()));
    }
  }

  @ParameterizedTest(name = "attempt {0} waits {1} ms")
  @CsvSource({"0, 100", "1, 125", "10, 931", "18, 5000", "1000, 5000"})
  void eachWaitIsAQuarterLongerUpToTheCap(int attempt, long ms) {
    assertThat(Backoff.DEFAULT.delay(attempt)).isEqualTo(Duration.ofMillis(ms));
  }
}
