package org.standalonecinder.webhook.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Who gets in when the total is reached. Each row admits {@code client:amount} in order (total 16,
 * 6 a client, as the webhook's MiB) and says what became of each: {@code +} admitted, {@code +N}
 * admitted by displacing N holdings of the client that held the most, {@code C} refused (the
 * client's own limit), {@code T} refused (the total, and nobody holds more than the newcomer
 * would).
 */
class FairShareTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "under the total, everyone gets in | a:4 b:4 c:4 | + + + | a=4 b=4 c=4",
        "a client past its own limit is refused | a:4 a:2 a:1 | + + C | a=6",
        "the attack: 3 addresses hold it all, the API server still gets in"
            + " | a:6 b:6 c:4 api:1 | + + + +1 | b=6 c=4 api=1",
        "a displaced holding is the newest of the biggest holder"
            + " | a:2 a:2 a:2 b:5 c:5 api:1 | + + + + + +1 | a=4 b=5 c=5 api=1",
        "equal holders never displace each other | a:4 b:4 c:4 d:4 e:4 | + + + + T"
            + " | a=4 b=4 c=4 d=4",
        "nobody yields to one who would then hold as much | a:6 b:6 c:4 c:2 | + + + T"
            + " | a=6 b=6 c=4",
        "as much is displaced as the newcomer needs | a:1 a:1 a:1 a:1 a:1 a:1 b:4 c:4 d:4"
            + " | + + + + + + + + +2 | a=4 b=4 c=4 d=4",
        "nobody bigger than the newcomer would be: refused at once | a:6 b:6 c:4 d:6"
            + " | + + + T | a=6 b=6 c=4",
        "nothing is displaced when displacing would not make room | a:3 a:3 b:5 c:5 d:5"
            + " | + + + + T | a=6 b=5 c=5",
      })
  void whoGetsIn(String name, String steps, String outcomes, String holds) {
    FairShare share = new FairShare(16, 6);
    List<String> got = new ArrayList<>();
    for (String step : steps.split(" ")) {
      String[] s = step.split(":");
      FairShare.Admission a = share.admit(s[0], Long.parseLong(s[1]), () -> {});
      got.add(
          a.holding() != null
              ? "+" + (a.displaced() == 0 ? "" : a.displaced())
              : a.refusal() == FairShare.Refusal.CLIENT ? "C" : "T");
    }
    assertThat(String.join(" ", got)).isEqualTo(outcomes);
    Map<String, Long> held = new TreeMap<>();
    for (String c : List.of("a", "b", "c", "d", "e", "api")) {
      if (share.heldBy(c) > 0) {
        held.put(c, share.heldBy(c));
      }
    }
    StringBuilder said = new StringBuilder();
    held.forEach(
        (c, n) -> said.append(said.length() == 0 ? "" : " ").append(c).append('=').append(n));
    assertThat(said.toString()).isEqualTo(sorted(holds));
    assertThat(share.held()).isLessThanOrEqualTo(16);
  }

  private static String sorted(String holds) {
    Map<String, String> m = new TreeMap<>();
    for (String h : holds.split(" ")) {
      m.put(h.split("=")[0], h);
    }
    return String.join(" ", m.values());
  }

  /** A displaced holding is told (its connection closed), and gives nothing back twice. */
  @Test
  void aDisplacedHoldingIsToldOnceAndItsReleaseIsANoOp() {
    FairShare share = new FairShare(4, 4);
    List<String> told = new ArrayList<>();
    FairShare.Holding first = share.admit("a", 2, () -> told.add("first")).holding();
    share.admit("a", 2, () -> told.add("second"));
    FairShare.Admission api = share.admit("api", 1, () -> told.add("api"));
    assertThat(api.displaced()).isEqualTo(1);
    assertThat(told).containsExactly("second");
    first.release();
    first.release();
    assertThat(share.heldBy("a")).isZero();
    assertThat(share.held()).isEqualTo(1);
    api.holding().release();
    assertThat(share.held()).isZero();
  }
}
