package org.standalonecinder.certs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Renewal of our own certificates with a moved clock; reloading of mounted files. */
class CertificateSourceTest {

  private static final Instant T0 = Instant.parse("2026-11-22T00:00:00Z");

  /** A clock the test moves. */
  static final class MovableClock extends Clock {
    Instant now;

    MovableClock(Instant now) {
      this.now = now;
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }

  @Test
  void renewsAtTwoThirdsAndTellsTheListeners() {
    MovableClock clock = new MovableClock(T0);
    CertificateAuthority ca = CertificateAuthority.generate("ca", Duration.ofDays(365), clock);
    DynamicCertificateSource source =
        new DynamicCertificateSource(
            ca, List.of("webhook"), List.of(), Duration.ofDays(3), RenewalPolicy.TWO_THIRDS, clock);
    List<IssuedCertificate> seen = new ArrayList<>();
    source.onChange(seen::add);
    IssuedCertificate first = source.current();
    assertThat(source.healthy()).isTrue();
    assertThat(source.trust().certificates()).containsExactly(ca.certificate());

    clock.now = T0.plus(Duration.ofDays(1));
    source.refresh();
    assertThat(seen).isEmpty();
    assertThat(source.current()).isSameAs(first);

    clock.now = T0.plus(Duration.ofDays(2));
    source.refresh();
    assertThat(seen).hasSize(1);
    assertThat(source.current()).isSameAs(seen.get(0)).isNotSameAs(first);
    assertThat(source.current().certificate().getNotAfter().toInstant())
        .isEqualTo(T0.plus(Duration.ofDays(5)));
    assertThat(ca.signed(source.current().certificate())).isTrue();
  }

  @Test
  void anExpiredCertificateIsUnhealthy() {
    MovableClock clock = new MovableClock(T0);
    CertificateAuthority ca = CertificateAuthority.generate("ca", Duration.ofDays(365), clock);
    DynamicCertificateSource source =
        new DynamicCertificateSource(
            ca,
            List.of("webhook"),
            List.of(),
            Duration.ofHours(1),
            RenewalPolicy.TWO_THIRDS,
            clock);
    clock.now = T0.plus(Duration.ofHours(2));
    assertThat(source.healthy()).isFalse();
    source.refresh();
    assertThat(source.healthy()).isTrue();
  }

  @Test
  void mountedFilesAreReloadedWhenTheyChangeAndBadOnesIgnored(@TempDir Path dir) throws Exception {
    Clock clock = Clock.systemUTC();
    CertificateAuthority ca = CertificateAuthority.generate("ca", Duration.ofDays(1), clock);
    Path crt = dir.resolve("tls.crt");
    Path key = dir.resolve("tls.key");
    Path caCrt = dir.resolve("ca.crt");
    IssuedCertificate one = ca.issueServing(List.of("a"), List.of(), Duration.ofHours(1), clock);
    Files.writeString(crt, one.chainPem());
    Files.writeString(key, one.keyPem());
    Files.writeString(caCrt, ca.certificatePem());
    FileCertificateSource source = new FileCertificateSource(crt, key, caCrt, clock);
    List<IssuedCertificate> seen = new ArrayList<>();
    source.onChange(seen::add);
    assertThat(source.current().certificate()).isEqualTo(one.certificate());
    assertThat(source.trust().certificates()).containsExactly(ca.certificate());

    source.refresh();
    assertThat(seen).as("unchanged files are not a change").isEmpty();

    // cert-manager renewed: new certificate and key.
    IssuedCertificate two = ca.issueServing(List.of("a"), List.of(), Duration.ofHours(1), clock);
    Files.writeString(crt, two.chainPem());
    Files.writeString(key, two.keyPem());
    source.refresh();
    assertThat(seen).hasSize(1);
    assertThat(source.current().certificate()).isEqualTo(two.certificate());

    // Half-way through a replacement: a new certificate with the old key. Ignored.
    IssuedCertificate three = ca.issueServing(List.of("a"), List.of(), Duration.ofHours(1), clock);
    Files.writeString(crt, three.chainPem());
    source.refresh();
    assertThat(seen).hasSize(1);
    assertThat(source.current().certificate()).isEqualTo(two.certificate());

    Files.writeString(crt, "garbage");
    source.refresh();
    assertThat(source.current().certificate()).isEqualTo(two.certificate());
    assertThat(source.healthy()).isTrue();
  }

  @Test
  void unreadableFilesAtStartAreAnError(@TempDir Path dir) {
    assertThatThrownBy(
            () ->
                new FileCertificateSource(
                    dir.resolve("tls.crt"), dir.resolve("tls.key"), null, Clock.systemUTC()))
        .isInstanceOf(CertificateException.class)
        .hasMessageContaining("cannot read certificate files");
  }
}
