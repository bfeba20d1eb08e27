package org.standalonecinder.provisioner.provision;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;
import org.standalonecinder.provisioner.cinder.Volume;

/** What a claim is told while Cinder makes its volume, and when it is looked at again. */
class BeingMadeTest {

  private static final Instant NOW = Instant.parse("2026-12-06T12:00:00Z");
  private static final ClaimRef SOURCE = new ClaimRef("apps", "src");

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "a blank volume,      ,      ,      ,      creating",
    "a clone,             vol-s, ,      ,      copying volume vol-s (claim apps/src) into",
    "a snapshot restored, ,      snap-1,,      copying snapshot snap-1 (VolumeSnapshot apps/src) into",
    "a backup restored,   ,      ,      bak-1, restoring backup bak-1 (VolumeSnapshot apps/src) into",
  })
  void theClaimIsToldWhatFillsItsVolume(
      String name, String volumeId, String snapshotId, String backupId, String words) {
    VolumeSource source =
        snapshotId != null
            ? new VolumeSource.FromSnapshot(SOURCE, snapshotId, null, 1, null, null, "available")
            : backupId != null
                ? new VolumeSource.FromBackup(SOURCE, backupId, null, 1, "available")
                : volumeId != null
                    ? new VolumeSource.Clone(
                        SOURCE, "uid-src", volumeId, 1, null, null, "available")
                    : null;
    assertThat(BeingMade.filling(source)).isEqualTo(words);
  }

  /**
   * How long so far is Cinder's record where it has one (a restart forgets nothing), and this
   * process' first look where Cinder's clock says the volume is not made yet.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "Cinder made it twelve minutes ago,        PT-12M, 10 minutes so far",
    "Cinder's clock runs ahead: our first look, PT5M,   under a minute so far",
    "Cinder gave no time: our first look,      ,       under a minute so far",
  })
  void howLongSoFarIsCindersRecord(String name, Duration createdAgo, String words) {
    Volume v =
        new Volume(
            "vol-1",
            "pvc-1",
            "creating",
            1,
            "nova",
            "__DEFAULT__",
            Map.of(),
            null,
            null,
            false,
            List.of(),
            Map.of(),
            createdAgo == null ? null : NOW.plus(createdAgo));
    BeingMade made =
        new BeingMade(
            new FakeCinderClient(), Duration.ofMinutes(1), Clock.fixed(NOW, ZoneOffset.UTC));

    assertThat(made.look(v, "creating").getMessage())
        .isEqualTo("Cinder is creating volume vol-1 (status creating); " + words);
  }

  /** A burst's looks are spread by how many volumes are being made, up to the longest look. */
  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "one volume just asked for: the first look,          PT0S,  1,    PT0.1S",
    "four volumes: still the first look,                PT0S,  4,    PT0.1S",
    "a hundred volumes: 2.5 s apart,                    PT0S,  100,  PT2.5S",
    "a hundred an hour in: the pace's longest,          PT1H,  100,  PT30S",
    "ten thousand volumes: never past the longest look, PT0S,  10000, PT30S",
  })
  void aBurstsLooksAreSpreadByHowManyAreBeingMade(
      String name, Duration age, int inFlight, Duration after) {
    assertThat(BeingMade.nextLook(age, inFlight)).isEqualTo(after);
  }
}
