package org.standalonecinder.provisioner.provision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;
import org.standalonecinder.provisioner.cinder.Microversion;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.controller.ProvisioningException;

/** The Cinder half of an expansion: when Cinder is asked to extend, and what a refusal says. */
class VolumeExpanderTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      nullValues = "-",
      value = {
        "available: extended                      | available       | 1 | 3.70 | 1 -> 2 | -",
        "in-use at 3.42: extended                 | in-use          | 1 | 3.42 | 1 -> 2 | -",
        "as big already (an earlier attempt): kept | in-use         | 2 | 3.70 | 2 -> 2 | -",
        "bigger already: never shrunk             | in-use          | 5 | 3.70 | 5 -> 5 | -",
        "in-use below 3.42: refused, final        | in-use          | 1 | 3.41 | -      | 3.42 is"
            + " needed",
        "the backend failed an earlier extend: the admin's command, final | error_extending | 1 |"
            + " 3.70 | - | cinder reset-state --state in-use vol-1",
        "still extending (an earlier look): looked at again, not asked again | extending | 1 |"
            + " 3.70 | - | still extending",
        "in error: a failure, not asked              | error       | 1 | 3.70 | - | not final",
        "in maintenance: a failure, not asked        | maintenance | 1 | 3.70 | - | not final"
      })
  void aVolumeGrowsOnlyWhenItMayAndNeeds(
      String name, String status, int size, String version, String grown, String refusal) {
    FakeCinderClient cinder = new FakeCinderClient().microversion(Microversion.parse(version));
    cinder.seed(
        new Volume(
            "vol-1",
            "pvc-1",
            status,
            size,
            "nova",
            "__DEFAULT__",
            Map.of(),
            null,
            null,
            false,
            List.of()));
    VolumeExpander expander = new VolumeExpander(cinder);
    if (refusal == null) {
      VolumeExpander.Grown g = (VolumeExpander.Grown) expander.expand("vol-1", 2);
      assertThat(g.fromGib() + " -> " + g.toGib()).isEqualTo(grown);
      assertThat(cinder.log().contains("extendVolume vol-1")).isEqualTo(g.extended());
    } else if (refusal.equals("not final")) {
      assertThatThrownBy(() -> expander.expand("vol-1", 2))
          .isInstanceOfSatisfying(
              ProvisioningException.class, e -> assertThat(e.isFinal()).isFalse())
          .hasMessageContaining("is " + status + ", where it cannot grow");
      assertThat(cinder.log()).doesNotContain("extendVolume vol-1");
    } else if (refusal.equals("still extending")) {
      assertThat(expander.expand("vol-1", 2))
          .isEqualTo(new VolumeExpander.Growing("vol-1", "extending"));
      assertThat(cinder.log()).doesNotContain("extendVolume vol-1");
    } else {
      assertThatThrownBy(() -> expander.expand("vol-1", 2))
          .isInstanceOfSatisfying(
              ProvisioningException.class, e -> assertThat(e.isFinal()).isTrue())
          .hasMessageContaining(refusal);
      assertThat(cinder.log()).doesNotContain("extendVolume vol-1");
    }
  }

  /**
   * Cinder accepts an extend and drops it when no backend has room: the volume is back at its old
   * size. The look that finds it so fails (the loop backs off) instead of asking again at once; the
   * attempt after that asks again.
   */
  @org.junit.jupiter.api.Test
  void anExtendCinderDropsIsAFailureNotAskedAgainAtOnce() {
    FakeCinderClient cinder = new FakeCinderClient().slowExtends();
    cinder.seed(
        new Volume(
            "vol-1",
            "pvc-1",
            "in-use",
            1,
            "nova",
            "__DEFAULT__",
            Map.of(),
            null,
            null,
            false,
            List.of()));
    VolumeExpander expander = new VolumeExpander(cinder);
    assertThat(expander.expand("vol-1", 2))
        .isEqualTo(new VolumeExpander.Growing("vol-1", "extending"));
    cinder.dropExtending("vol-1");
    assertThatThrownBy(() -> expander.expand("vol-1", 2))
        .isInstanceOfSatisfying(ProvisioningException.class, e -> assertThat(e.isFinal()).isFalse())
        .hasMessageContaining("Cinder did not grow volume vol-1 to 2 GiB: it is in-use at 1 GiB");
    assertThat(cinder.log().stream().filter(l -> l.equals("extendVolume vol-1"))).hasSize(1);
    assertThat(expander.expand("vol-1", 2)).isInstanceOf(VolumeExpander.Growing.class);
    assertThat(cinder.log().stream().filter(l -> l.equals("extendVolume vol-1"))).hasSize(2);
  }
}
