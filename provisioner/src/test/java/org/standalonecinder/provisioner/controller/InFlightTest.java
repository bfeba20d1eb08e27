package org.standalonecinder.provisioner.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.function.BiConsumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The bounds on copies in flight, one rule a row (limits: 3 overall, 2 a namespace). */
class InFlightTest {

  private static final String APPS_FULL =
      "2 copies are in flight in namespace apps (at most 2 at once, --max-copies-per-namespace)";
  private static final String ALL_FULL = "3 copies are in flight (at most 3 at once, --max-copies)";

  /** A clock the rows move. */
  static final class Moving extends Clock {
    Instant now = Instant.parse("2026-12-06T12:00:00Z");

    void pass(Duration d) {
      now = now.plus(d);
    }

    @Override
    public Instant instant() {
      return now;
    }

    @Override
    public ZoneId getZone() {
      return ZoneId.of("UTC");
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }
  }

  static Arguments row(
      String name, BiConsumer<InFlight, Moving> before, String uid, String ns, String said) {
    return Arguments.of(name, before, uid, ns, said);
  }

  static Stream<Arguments> rows() {
    BiConsumer<InFlight, Moving> twoInApps =
        (c, t) -> {
          c.reserve("a1", "apps");
          c.reserve("a2", "apps");
        };
    return Stream.of(
        row("room: counted", (c, t) -> {}, "a1", "apps", null),
        row("the namespace's limit reached: waits", twoInApps, "a3", "apps", APPS_FULL),
        row("another namespace still has room", twoInApps, "o1", "other", null),
        row(
            "the overall limit reached: waits",
            twoInApps.andThen((c, t) -> c.reserve("o1", "other")),
            "b1",
            "b",
            ALL_FULL),
        row("a claim counted already is renewed, not refused", twoInApps, "a2", "apps", null),
        row(
            "a copy that ended leaves room",
            twoInApps.andThen((c, t) -> c.release("a1")),
            "a3",
            "apps",
            null),
        row(
            "releasing a claim never counted changes nothing",
            twoInApps.andThen((c, t) -> c.release("nobody")),
            "a3",
            "apps",
            APPS_FULL),
        row(
            "copies whose looks stopped for the lease no longer count",
            twoInApps.andThen((c, t) -> t.pass(InFlight.LEASE.plusSeconds(1))),
            "a3",
            "apps",
            null),
        row(
            "one found under way is held past the bound, and counts against the next",
            twoInApps.andThen((c, t) -> c.hold("found", "apps")),
            "o1",
            "other",
            ALL_FULL),
        row(
            "one held is renewed by its look, not refused",
            twoInApps.andThen((c, t) -> c.hold("a3", "apps")),
            "a3",
            "apps",
            null),
        row(
            "one held and ended leaves room",
            twoInApps.andThen(
                (c, t) -> {
                  c.hold("o1", "other");
                  c.release("o1");
                }),
            "b1",
            "b",
            null),
        row(
            "one held whose looks stopped for the lease no longer counts",
            (c, t) -> {
              c.hold("a1", "apps");
              c.hold("a2", "apps");
              t.pass(InFlight.LEASE.plusSeconds(1));
            },
            "a3",
            "apps",
            null),
        row(
            "a look within the lease renews a copy",
            twoInApps.andThen(
                (c, t) -> {
                  t.pass(InFlight.LEASE.minusSeconds(10));
                  c.reserve("a1", "apps");
                  c.reserve("a2", "apps");
                  t.pass(Duration.ofSeconds(20));
                }),
            "a3",
            "apps",
            APPS_FULL));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void aCopyIsCountedOrWaits(
      String name, BiConsumer<InFlight, Moving> before, String uid, String ns, String said) {
    Moving clock = new Moving();
    InFlight copies =
        new InFlight(
            new InFlight.Limits("copies", 3, 2, "--max-copies", "--max-copies-per-namespace"),
            clock);
    before.accept(copies, clock);
    boolean counted = copies.counts(uid);
    int size = copies.size();

    assertThat(copies.reserve(uid, ns)).isEqualTo(said);
    assertThat(copies.counts(uid)).isEqualTo(said == null);
    assertThat(copies.size()).isEqualTo(said == null && !counted ? size + 1 : size);
  }
}
