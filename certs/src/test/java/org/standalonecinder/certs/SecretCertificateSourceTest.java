package org.standalonecinder.certs;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.standalonecinder.certs.CertificateSourceTest.MovableClock;

/**
 * Serving certificates of the CA in a Secret: leaf renewal, a CA rotated by another replica, and
 * the bundle published before a certificate of a new CA is served.
 */
@EnableKubernetesMockClient(crud = true)
class SecretCertificateSourceTest {

  static KubernetesClient client;

  private static final Instant T0 = Instant.parse("2026-11-22T00:00:00Z");
  private final MovableClock clock = new MovableClock(T0);
  private final List<String> events = new ArrayList<>();
  private boolean injectionFails;

  private SecretCertificateSource source(Consumer<CaBundle> trust) {
    SecretCaStore store =
        new SecretCaStore(
            client,
            "standalone-cinder",
            "webhook-ca",
            "webhook-ca",
            Duration.ofDays(30),
            RenewalPolicy.TWO_THIRDS,
            clock);
    SecretCertificateSource s =
        new SecretCertificateSource(
            store,
            ServiceNames.of("webhook", "standalone-cinder", List.of()),
            List.of(),
            Duration.ofDays(3),
            RenewalPolicy.TWO_THIRDS,
            trust,
            clock);
    s.onChange(c -> events.add("serve " + c.certificate().getIssuerX500Principal().getName()));
    return s;
  }

  private void inject(CaBundle b) {
    if (injectionFails) {
      throw new IllegalStateException("API server unavailable");
    }
    events.add("trust " + b.certificates().size());
  }

  @AfterEach
  void clean() {
    client.secrets().inAnyNamespace().delete();
  }

  @Test
  void theBundleIsPublishedOnceAndTheLeafRenewedAtTwoThirds() {
    SecretCertificateSource s = source(this::inject);
    IssuedCertificate first = s.current();
    assertThat(events).containsExactly("trust 1");
    assertThat(s.healthy()).isTrue();

    clock.now = T0.plus(Duration.ofDays(1));
    s.refresh();
    assertThat(s.current()).isSameAs(first);

    clock.now = T0.plus(Duration.ofDays(2)).plusSeconds(60);
    s.refresh();
    assertThat(s.current()).isNotSameAs(first);
    assertThat(events).containsExactly("trust 1", "serve CN=webhook-ca");
  }

  @Test
  void aCaRotatedByAnotherReplicaIsTrustedARefreshBeforeItsCertificatesAreServed() {
    SecretCertificateSource a = source(this::inject);
    IssuedCertificate first = a.current();
    events.clear();

    clock.now = T0.plus(Duration.ofDays(21));
    SecretCertificateSource b = source(bundle -> {});
    a.refresh();
    assertThat(events)
        .as("published; the API server may not read it yet")
        .containsExactly("trust 2");
    assertThat(a.current()).isSameAs(first);
    a.refresh();

    assertThat(events).containsExactly("trust 2", "serve CN=webhook-ca");
    var newCa = b.trust().certificates().get(0);
    assertThat(a.trust().certificates()).hasSize(2).first().isEqualTo(newCa);
    assertThat(signedBy(first, a.trust().certificates().get(1)))
        .as("the old CA stays trusted")
        .isTrue();
    assertThat(signedBy(a.current(), newCa)).isTrue();
    assertThat(signedBy(first, newCa)).isFalse();
  }

  private static boolean signedBy(IssuedCertificate c, java.security.cert.X509Certificate ca) {
    try {
      c.certificate().verify(ca.getPublicKey());
      return true;
    } catch (java.security.GeneralSecurityException e) {
      return false;
    }
  }

  @Test
  void whileTheBundleCannotBePublishedTheOldCertificateStays() {
    SecretCertificateSource a = source(this::inject);
    IssuedCertificate first = a.current();
    events.clear();

    clock.now = T0.plus(Duration.ofDays(21));
    source(bundle -> {});
    injectionFails = true;
    a.refresh();
    assertThat(a.current()).as("a certificate the API server cannot verify yet").isSameAs(first);
    assertThat(events).isEmpty();

    injectionFails = false;
    a.refresh();
    assertThat(events).containsExactly("trust 2");
    a.refresh();
    assertThat(events).containsExactly("trust 2", "serve CN=webhook-ca");
  }
}
