package org.standalonecinder.provisioner.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Event names the API server accepts (its validation, which fabric8's mock does not run). */
class EventRecorderTest {

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
}
