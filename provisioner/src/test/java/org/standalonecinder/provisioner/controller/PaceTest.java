package org.standalonecinder.provisioner.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** How work under way in Cinder is looked at again and told. */
class PaceTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "just asked for,                     PT0S,     under a minute so far, PT0.1S",
    "a quarter second: the first look,   PT0.25S,  under a minute so far, PT0.1S",
    "two seconds: a quarter of it,       PT2S,     under a minute so far, PT0.5S",
    "twenty seconds,                     PT20S,    under a minute so far, PT5S",
    "a minute,                           PT1M,     1 minute so far,       PT15S",
    "four minutes: the step below,       PT4M,     2 minutes so far,      PT30S",
    "twelve minutes,                     PT12M,    10 minutes so far,     PT30S",
    "fifty-nine minutes,                 PT59M,    45 minutes so far,     PT30S",
    "an hour,                            PT1H,     1 h so far,            PT30S",
    "two and a half hours and a bit,     PT2H40M,  2 h 30 min so far,     PT30S",
  })
  void theWordsChangeRarelyAndTheLooksGrowToACap(
      String name, Duration soFar, String words, Duration after) {
    assertThat(Pace.soFar(soFar)).isEqualTo(words);
    assertThat(Pace.nextLook(soFar)).isEqualTo(after);
  }

  @Test
  void workIsTimedFromItsFirstLookAndForgottenWhenNotLookedAtForLong() {
    AtomicReference<Instant> now = new AtomicReference<>(Instant.parse("2026-12-06T12:00:00Z"));
    Clock clock =
        new Clock() {
          @Override
          public ZoneId getZone() {
            return ZoneId.of("UTC");
          }

          @Override
          public Clock withZone(ZoneId zone) {
            return this;
          }

          @Override
          public Instant instant() {
            return now.get();
          }
        };
    Pace pace = new Pace(clock);
    assertThat(pace.seen("delete vol-1")).isZero();
    now.set(now.get().plusSeconds(90));
    assertThat(pace.seen("delete vol-1")).isEqualTo(Duration.ofSeconds(90));
    assertThat(pace.seen("delete vol-2")).isZero();
    // vol-1 is looked at no more (its PV went another way); vol-2 still is
    now.set(now.get().plus(Pace.FORGOTTEN_AFTER).minusSeconds(1));
    assertThat(pace.seen("delete vol-2")).isEqualTo(Pace.FORGOTTEN_AFTER.minusSeconds(1));
    now.set(now.get().plusSeconds(2));
    pace.seen("delete vol-2");
    assertThat(pace.remembered()).isEqualTo(1);
    pace.done("delete vol-2");
    assertThat(pace.remembered()).isZero();
  }
}
