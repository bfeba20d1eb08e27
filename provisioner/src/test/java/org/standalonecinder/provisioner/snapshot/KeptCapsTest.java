package org.standalonecinder.provisioner.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The caps on what is kept, written as the attack: a tenant asks for more snapshots of a claim, or
 * of its namespace, than the admin allows (here 2 a claim, 3 a namespace), at once or while the
 * cache has not shown what was just made. Counted in contents, what holds Cinder's space.
 */
class KeptCapsTest {

  private static final SnapshotLimits LIMITS = new SnapshotLimits(8, 4, 2, 3);

  private static VolumeSnapshot snapshot(String name, String claim) {
    return new VolumeSnapshot(
        "apps", name, "u-" + name, "1", false, "cinder", claim, null, null, null);
  }

  /**
   * @param madeOfA contents the cache holds of claim a's volume (vol-a)
   * @param madeInNamespace contents the cache holds for the namespace
   * @param asked the snapshots asked for, in turn: a letter a claim (a or b)
   * @param admitted which of them are admitted: y or n each
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "none kept: two of a claim admitted, the third refused | 0 | 0 | aaa | yyn",
        "one kept: one more admitted | 1 | 1 | aa | yn",
        "two kept of the claim: another claim's admitted up to the namespace's | 2 | 2 | ab | ny",
        "three kept in the namespace: none admitted | 0 | 3 | ab | nn",
        "a burst over two claims: the namespace's cap holds | 0 | 0 | ababab | yyyn" + "nn",
      })
  void contentsMadeAndPendingCount(
      String name, int madeOfA, int madeInNamespace, String asked, String admitted) {
    KeptCaps caps =
        new KeptCaps(
            LIMITS,
            v -> v.equals("vol-a") ? madeOfA : 0,
            ns -> madeInNamespace,
            content -> false,
            Clock.systemUTC());
    StringBuilder got = new StringBuilder();
    List<String> why = new ArrayList<>();
    for (int i = 0; i < asked.length(); i++) {
      String claim = String.valueOf(asked.charAt(i));
      Optional<String> refused =
          caps.admit(snapshot("s" + i, claim), "vol-" + claim, "content-" + i);
      got.append(refused.isEmpty() ? 'y' : 'n');
      refused.ifPresent(why::add);
    }
    assertThat(got.toString()).isEqualTo(admitted);
    assertThat(why)
        .allSatisfy(
            w ->
                assertThat(w)
                    .contains("is not made")
                    .containsAnyOf("--max-snapshots-per-claim", "--max-snapshots-per-namespace")
                    .contains("after one of them is deleted"));
  }

  /**
   * What this process made counts until the cache shows it, and then only there (not twice), or
   * until it is 2 minutes old (a write that failed frees its place). A cap of 2 a claim: s0 is
   * made, then s1 and s2 are asked for.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "s0 made, not yet in the cache: counted, s2 refused | false | 0 | yn",
        "s0 made and in the cache: counted once, s2 refused | true | 0 | yn",
        "s0 made 3 minutes ago and never seen: no longer counted | false | 180 | yy",
      })
  void whatThisProcessMadeCountsUntilTheCacheShowsIt(
      String name, boolean seen, int laterSeconds, String then) {
    Set<String> cached = new HashSet<>();
    Instant[] now = {Instant.parse("2026-12-07T06:00:00Z")};
    Clock clock =
        new Clock() {
          @Override
          public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
          }

          @Override
          public Clock withZone(java.time.ZoneId zone) {
            return this;
          }

          @Override
          public Instant instant() {
            return now[0];
          }
        };
    KeptCaps caps =
        new KeptCaps(LIMITS, v -> cached.size(), ns -> cached.size(), cached::contains, clock);
    assertThat(caps.admit(snapshot("s0", "a"), "vol-a", "content-0")).isEmpty();
    if (seen) {
      cached.add("content-0");
    }
    now[0] = now[0].plus(Duration.ofSeconds(laterSeconds));
    String got =
        (caps.admit(snapshot("s1", "a"), "vol-a", "content-1").isEmpty() ? "y" : "n")
            + (caps.admit(snapshot("s2", "a"), "vol-a", "content-2").isEmpty() ? "y" : "n");
    assertThat(got).isEqualTo(then);
  }
}
