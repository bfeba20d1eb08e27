package org.standalonecinder.provisioner.cinder;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What Cinder is sent of a description or a metadata value: never more than it keeps. */
class CinderTextTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "empty: kept | 0 | | 0 | false",
        "255 characters: kept whole | 255 | | 255 | false",
        "256 characters: cut to 255, marked | 256 | | 255 | true",
        "a claim and snapshot of 253 characters each: cut | 600 | | 255 | true",
        "a character of two chars across the cut: never halved | 251 | \uD83D\uDE00 | 254 | true",
      })
  void aTextIsKeptWholeOrCutToWhatCinderKeeps(
      String name, int before, String then, int length, boolean cut) {
    String text = "a".repeat(before) + (then == null ? "" : then.repeat(5));
    String sent = CinderText.bounded(text);
    assertThat(sent).hasSize(length);
    assertThat(sent.endsWith("...")).isEqualTo(cut);
    assertThat(text).startsWith(sent.substring(0, sent.length() - (cut ? 3 : 0)));
    if (cut) {
      assertThat(Character.isHighSurrogate(sent.charAt(sent.length() - 4)))
          .as("no half character before the mark")
          .isFalse();
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {"a snapshot's description | 300", "a VolumeSnapshot named in metadata | 317"})
  void everySpecIsWithinCinderBounds(String name, int length) {
    String text = "x".repeat(length);
    var snapshot = new SnapshotSpec("n", "v", text, Map.of("k", text));
    var backup = new BackupSpec("n", "v", text, Map.of("k", text));
    var volume = VolumeSpec.blank("n", 1).withDescription(text).withMetadata(Map.of("k", text));
    assertThat(snapshot.description()).hasSize(CinderText.MAX);
    assertThat(snapshot.metadata().get("k")).hasSize(CinderText.MAX);
    assertThat(backup.description()).hasSize(CinderText.MAX);
    assertThat(backup.metadata().get("k")).hasSize(CinderText.MAX);
    assertThat(volume.description()).hasSize(CinderText.MAX);
    assertThat(volume.metadata().get("k")).hasSize(CinderText.MAX);
  }
}
