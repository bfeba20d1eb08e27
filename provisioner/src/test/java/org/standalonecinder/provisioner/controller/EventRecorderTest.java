package org.standalonecinder.provisioner.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.events.v1.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Event names the API server accepts (its validation, which fabric8's mock does not run), and
 * repeats written once per quiet time.
 */
@EnableKubernetesMockClient(crud = true)
class EventRecorderTest {

  KubernetesClient client;

  private static final Pattern SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "a short claim name, data, 1, data.18eaa479fc965e2a",
    "a PV name, pvc-7fd29fd2-e5d7-4226-8cd3-fae72b6b6c4d, 1,"
        + " pvc-7fd29fd2-e5d7-4226-8cd3-fae72b6b6c4d.18eaa479fc965e2a",
    "a 253-character name is cut to fit, x, 253, ",
    "a cut never ends in a dot, x.y, 120, "
  })
  void namesAreDnsSubdomainsOfAtMost253Characters(
      String name, String unit, int repeat, String expected) {
    String objectName = unit.repeat(repeat);
    if (objectName.length() > 253) {
      objectName = objectName.substring(0, 253);
    }
    String eventName = EventRecorder.name(objectName, 0x18eaa479fc965e2aL);
    assertThat(eventName)
        .matches(SUBDOMAIN)
        .hasSizeLessThanOrEqualTo(253)
        .endsWith(".18eaa479fc965e2a");
    if (expected != null) {
      assertThat(eventName).isEqualTo(expected);
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "a short note is kept, a, 10, 10",
    "1024 bytes of ASCII are kept, a, 1024, 1024",
    "ASCII past 1024 bytes is cut, a, 5000, 1024",
    "two-byte characters past 1024 bytes are cut between characters, ü, 600, 1024",
    "four-byte characters are never split, \uD83D\uDCBE, 300, 1023",
  })
  void notesFitTheApiServersLimitInBytes(String name, String unit, int repeat, int bytes) {
    String note = EventRecorder.fit(unit.repeat(repeat));
    byte[] utf8 = note.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    assertThat(utf8.length).isLessThanOrEqualTo(1024).isGreaterThanOrEqualTo(bytes - 3);
    assertThat(new String(utf8, java.nio.charset.StandardCharsets.UTF_8)).isEqualTo(note);
    assertThat(note).doesNotContain("\uFFFD");
  }

  /** A clock the test moves. */
  static final class Moving extends Clock {
    Instant now = Instant.parse("2026-11-27T10:00:00Z");

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
      return now;
    }
  }

  private static PersistentVolumeClaim claim(String name, String uid) {
    return new PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withNamespace("apps")
        .withName(name)
        .withUid(uid)
        .endMetadata()
        .build();
  }

  /**
   * Each row tells events, one per step ({@code claim:note@minute}), and lists what was written
   * ({@code claim:note} or {@code claim:note x count} for a series).
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a first event is written | a:bad@0 | a:bad",
        "the same again at every resync is written once | a:bad@0 a:bad@1 a:bad@2 a:bad@9 | a:bad",
        "after the quiet time, a series with the count | a:bad@0 a:bad@1 a:bad@5 a:bad@10 |"
            + " a:bad a:bad x4",
        "another note is another event | a:bad@0 a:worse@1 a:bad@2 | a:bad a:worse",
        "another claim is another event | a:bad@0 b:bad@0 | a:bad b:bad",
        "a claim made again under the same name is another object | a:bad@0 a2:bad@1 |"
            + " a:bad a2:bad",
      })
  void repeatsAreWrittenOncePerQuietTime(String name, String steps, String written) {
    Moving clock = new Moving();
    Instant start = clock.now;
    EventRecorder events = new EventRecorder(client, "standalone-cinder", "test", clock);
    for (String step : steps.trim().split(" ")) {
      String who = step.substring(0, step.indexOf(':'));
      String note = step.substring(step.indexOf(':') + 1, step.indexOf('@'));
      clock.now =
          start.plus(Duration.ofMinutes(Integer.parseInt(step.substring(step.indexOf('@') + 1))));
      events.warning(claim(who.replace("2", ""), "uid-" + who), "ProvisioningFailed", note);
    }
    List<Event> all = client.events().v1().events().inNamespace("apps").list().getItems();
    String got =
        all.stream()
            .sorted(Comparator.comparing(e -> e.getMetadata().getName()))
            .map(
                e ->
                    e.getRegarding().getName()
                        + (e.getRegarding().getUid().endsWith("2") ? "2" : "")
                        + ":"
                        + e.getNote()
                        + (e.getSeries() == null ? "" : " x" + e.getSeries().getCount()))
            .reduce((a, b) -> a + " " + b)
            .orElse("");
    assertThat(got).isEqualTo(written.trim());
  }
}
