package org.standalonecinder.provisioner.snapshot;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Which VolumeSnapshots the caps on what is kept admit, written as the attack: a tenant asks for
 * more snapshots of a claim (or of a namespace) than the admin allows, at once or one by one. Caps
 * of 3 a claim and 5 a namespace; snapshots made a second apart, in their order in the row.
 */
class KeptCapsTest {

  private static final SnapshotLimits LIMITS = new SnapshotLimits(8, 4, 3, 5);

  /**
   * One snapshot a letter, a second apart: {@code a}/{@code b} the claim it is of, upper case of a
   * class not ours, {@code -} one being deleted, {@code p} a pre-provisioned one (of a content).
   */
  private static List<VolumeSnapshot> snapshots(String row) {
    List<VolumeSnapshot> all = new ArrayList<>();
    int i = 0;
    for (String s : row.split(" ")) {
      boolean deleting = s.startsWith("-");
      String c = deleting ? s.substring(1) : s;
      all.add(
          new VolumeSnapshot(
              "apps",
              "s" + i,
              "u" + i,
              "1",
              deleting,
              Character.isUpperCase(c.charAt(0)) ? "theirs" : "cinder",
              c.equals("p") ? null : c.toLowerCase(),
              c.equals("p") ? "content-" + i : null,
              null,
              String.format("2026-12-07T05:00:%02dZ", i)));
      i++;
    }
    return all;
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "the third of a claim: made | a a a | 2 | ",
        "the fourth of a claim: not made | a a a a | 3 | per-claim",
        "the fourth of a claim after an older one is being deleted: made | a -a a a | 3 | ",
        "the oldest of a burst past the cap: made | a a a a a a | 0 | ",
        "the youngest of a burst past the cap: not made | a a a a a a | 5 | per-claim",
        "another provisioner's snapshots of the claim do not count | A A A a | 3 | ",
        "pre-provisioned snapshots do not count | p p p a | 3 | ",
        "the sixth of the namespace, over two claims: not made | a a a b b b | 5 | per-namespace",
        "the fifth of the namespace: made | a a b b b | 4 | ",
      })
  void theOldestAreMadeFirst(String name, String row, int which, String refusedBy) {
    List<VolumeSnapshot> all = snapshots(row);
    Optional<String> refusal =
        KeptCaps.refusal(all.get(which), all, s -> s.className().equals("cinder"), LIMITS);
    if (refusedBy == null) {
      assertThat(refusal).isEmpty();
    } else {
      assertThat(refusal)
          .hasValueSatisfying(
              why ->
                  assertThat(why)
                      .contains("VolumeSnapshot apps/s" + which + " is not made")
                      .contains("--max-snapshots-" + refusedBy)
                      .contains("once older VolumeSnapshots are deleted"));
    }
  }
}
