package org.standalonecinder.provisioner.provision;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The bounds on copies in flight, one rule a row (limits: 3 overall, 2 a namespace). */
class CopiesInFlightTest {

  static Arguments row(
      String name, Consumer<CopiesInFlight> before, String uid, String ns, String said) {
    return Arguments.of(name, before, uid, ns, said);
  }

  static Stream<Arguments> rows() {
    Consumer<CopiesInFlight> twoInApps =
        c -> {
          c.reserve("a1", "apps");
          c.reserve("a2", "apps");
        };
    return Stream.of(
        row("room: counted", c -> {}, "a1", "apps", null),
        row(
            "the namespace's limit reached: waits",
            twoInApps,
            "a3",
            "apps",
            "2 copies are in flight in namespace apps (at most 2 at once,"
                + " --max-copies-per-namespace)"),
        row("another namespace still has room", twoInApps, "o1", "other", null),
        row(
            "the overall limit reached: waits",
            twoInApps.andThen(c -> c.reserve("o1", "other")),
            "b1",
            "b",
            "3 copies are in flight (at most 3 at once, --max-copies)"),
        row("a claim counted already is not refused again", twoInApps, "a2", "apps", null),
        row(
            "a copy that ended leaves room",
            twoInApps.andThen(c -> c.release("a1")),
            "a3",
            "apps",
            null),
        row(
            "releasing a claim never counted changes nothing",
            twoInApps.andThen(c -> c.release("nobody")),
            "a3",
            "apps",
            "2 copies are in flight in namespace apps (at most 2 at once,"
                + " --max-copies-per-namespace)"),
        row(
            "copies found after a restart count past the limit, and hold new ones",
            twoInApps.andThen(c -> c.track("a9", "apps")),
            "o1",
            "other",
            "3 copies are in flight (at most 3 at once, --max-copies)"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void aCopyIsCountedOrWaits(
      String name, Consumer<CopiesInFlight> before, String uid, String ns, String said) {
    CopiesInFlight copies = new CopiesInFlight(new CopyLimits(3, 2));
    before.accept(copies);
    int counted = copies.size();

    assertThat(copies.reserve(uid, ns)).isEqualTo(said);
    assertThat(copies.size())
        .isEqualTo(said == null && !alreadyCounted(name) ? counted + 1 : counted);
  }

  private static boolean alreadyCounted(String name) {
    return name.startsWith("a claim counted already");
  }
}
