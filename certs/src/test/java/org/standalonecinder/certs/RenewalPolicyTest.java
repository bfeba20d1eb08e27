package org.standalonecinder.certs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Renewal points with a fixed clock, and CA bundles across a rotation. */
class RenewalPolicyTest {

  private static final Instant T0 = Instant.parse("2026-11-22T00:00:00Z");

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "90 days: renewed after 60 | P90D | P60D",
        "1 year: renewed after 243 days 8 h | P365D | PT5840H",
        "3 hours: renewed after 2 | PT3H | PT2H"
      })
  void renewsAtTwoThirdsOfTheLifetime(String name, String life, String after) {
    Instant end = T0.plus(Duration.parse(life));
    assertThat(RenewalPolicy.TWO_THIRDS.renewAt(T0, end)).isEqualTo(T0.plus(Duration.parse(after)));
  }

  @ParameterizedTest(name = "at +{0}: due={1}")
  @CsvSource({
    "PT0S, false",
    "PT59M, false",
    "PT1H59M, false",
    "PT2H, true",
    "PT2H30M, true",
    "PT5H, true"
  })
  void dueWithAFixedClock(String at, boolean due) {
    Clock issue = Clock.fixed(T0, ZoneOffset.UTC);
    CertificateAuthority ca = CertificateAuthority.generate("ca", Duration.ofDays(1), issue);
    // Issued backdated by a minute with 3 h of life in all: times count from its notBefore.
    var leaf = ca.issueServing(List.of("x"), List.of(), Duration.ofHours(3).minusMinutes(1), issue);
    Instant notBefore = leaf.certificate().getNotBefore().toInstant();
    assertThat(RenewalPolicy.TWO_THIRDS.due(leaf.certificate(), notBefore.plus(Duration.parse(at))))
        .isEqualTo(due);
  }

  @Test
  void fractionMustBeAFraction() {
    assertThatThrownBy(() -> new RenewalPolicy(1.0)).hasMessageContaining("between 0 and 1");
    assertThatThrownBy(() -> new RenewalPolicy(0)).hasMessageContaining("between 0 and 1");
  }

  @Test
  void aRotationKeepsBothCasUntilTheOldOneExpires() {
    Clock c0 = Clock.fixed(T0, ZoneOffset.UTC);
    CertificateAuthority old = CertificateAuthority.generate("old", Duration.ofDays(30), c0);
    CertificateAuthority fresh = CertificateAuthority.generate("new", Duration.ofDays(365), c0);
    CaBundle bundle = CaBundle.of(List.of(old.certificate()));

    CaBundle during = bundle.with(fresh.certificate(), T0.plus(Duration.ofDays(20)));
    assertThat(during.certificates()).containsExactly(fresh.certificate(), old.certificate());
    assertThat(during.with(fresh.certificate(), T0.plus(Duration.ofDays(21))).certificates())
        .as("adding the same CA again changes nothing")
        .hasSize(2);

    CaBundle after = during.withoutExpired(T0.plus(Duration.ofDays(31)));
    assertThat(after.certificates()).containsExactly(fresh.certificate());
  }
}
