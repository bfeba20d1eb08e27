package org.standalonecinder.certs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The CA and its serving certificates: names, validity, chain, PEM, and a real TLS handshake. */
class CertificateAuthorityTest {

  private static final Instant NOW = Instant.parse("2026-11-22T00:00:00Z");
  private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);
  private static final CertificateAuthority CA =
      CertificateAuthority.generate("standalone-cinder-webhook-ca", Duration.ofDays(365), CLOCK);

  private static IssuedCertificate serving(CertificateAuthority ca, Duration validity) {
    return ca.issueServing(
        ServiceNames.of("webhook", "standalone-cinder", List.of("localhost")),
        List.of("127.0.0.1"),
        validity,
        CLOCK);
  }

  @Test
  void servingCertificateCarriesEveryServiceName() throws Exception {
    X509Certificate leaf = serving(CA, Duration.ofDays(30)).certificate();
    List<String> names = new ArrayList<>();
    for (List<?> san : leaf.getSubjectAlternativeNames()) {
      names.add(san.get(1).toString());
    }
    assertThat(names)
        .containsExactly(
            "webhook",
            "webhook.standalone-cinder",
            "webhook.standalone-cinder.svc",
            "webhook.standalone-cinder.svc.cluster.local",
            "localhost",
            "127.0.0.1");
    assertThat(leaf.getSubjectX500Principal().getName()).isEqualTo("CN=webhook");
    assertThat(leaf.getExtendedKeyUsage()).containsExactly("1.3.6.1.5.5.7.3.1");
    assertThat(leaf.getBasicConstraints()).isEqualTo(-1);
    assertThat(CA.certificate().getBasicConstraints()).isGreaterThanOrEqualTo(0);
    assertThat(CA.signed(leaf)).isTrue();
    assertThat(leaf.getPublicKey().getAlgorithm()).isEqualTo("EC");
  }

  @Test
  void validityStartsAMinuteEarlyAndNeverOutlivesTheCa() {
    X509Certificate leaf = serving(CA, Duration.ofDays(30)).certificate();
    assertThat(leaf.getNotBefore().toInstant()).isEqualTo(NOW.minusSeconds(60));
    assertThat(leaf.getNotAfter().toInstant()).isEqualTo(NOW.plus(Duration.ofDays(30)));
    X509Certificate tooLong = serving(CA, Duration.ofDays(3650)).certificate();
    assertThat(tooLong.getNotAfter()).isEqualTo(CA.certificate().getNotAfter());
  }

  @Test
  void aCaKeptAsPemIssuesCertificatesTheOriginalVerifies() {
    CertificateAuthority reloaded = CertificateAuthority.fromPem(CA.certificatePem(), CA.keyPem());
    assertThat(reloaded.certificate()).isEqualTo(CA.certificate());
    assertThat(CA.signed(serving(reloaded, Duration.ofDays(1)).certificate())).isTrue();
    assertThat(CA.keyPem()).startsWith("-----BEGIN PRIVATE KEY-----");
    assertThat(CA.toString()).doesNotContain("PRIVATE");
  }

  @Test
  void aLeafIsNotAcceptedAsACa() {
    IssuedCertificate leaf = serving(CA, Duration.ofDays(1));
    assertThatThrownBy(() -> CertificateAuthority.fromPem(leaf.chainPem(), leaf.keyPem()))
        .isInstanceOf(CertificateException.class)
        .hasMessageContaining("is not a CA");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "uppercase service | Webhook | ns | not a DNS label",
        "dot in namespace | webhook | a.b | not a DNS label",
        "empty service | '' | ns | not a DNS label"
      })
  void badServiceNamesAreRefused(String name, String service, String namespace, String message) {
    assertThatThrownBy(() -> ServiceNames.of(service, namespace, List.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(message);
  }

  @Test
  void aBadIpIsRefused() {
    assertThatThrownBy(
            () -> CA.issueServing(List.of("x"), List.of("not-an-ip"), Duration.ofDays(1), CLOCK))
        .hasMessageContaining("is not an IP address");
  }

  @Test
  void aRealHandshakeTrustsOnlyTheCa() throws Exception {
    Clock real = Clock.systemUTC();
    CertificateAuthority ca = CertificateAuthority.generate("test-ca", Duration.ofDays(1), real);
    IssuedCertificate leaf =
        ca.issueServing(List.of("localhost"), List.of("127.0.0.1"), Duration.ofHours(1), real);
    CertificateAuthority other = CertificateAuthority.generate("other", Duration.ofDays(1), real);

    assertThat(handshake(leaf, CaBundle.of(List.of(ca.certificate())))).isTrue();
    assertThat(handshake(leaf, CaBundle.of(List.of(other.certificate())))).isFalse();
    // During a CA rotation a bundle with both CAs accepts the old CA's certificates.
    assertThat(
            handshake(
                leaf,
                CaBundle.of(List.of(other.certificate())).with(ca.certificate(), real.instant())))
        .isTrue();
  }

  /** A TLS server with {@code leaf} and a client that trusts {@code trusted} and checks names. */
  static boolean handshake(IssuedCertificate leaf, CaBundle trusted) throws Exception {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    ks.load(null, null);
    ks.setKeyEntry(
        "leaf",
        leaf.key(),
        new char[0],
        leaf.chain().toArray(new java.security.cert.Certificate[0]));
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(ks, new char[0]);
    SSLContext serverCtx = SSLContext.getInstance("TLS");
    serverCtx.init(kmf.getKeyManagers(), null, null);

    SSLContext clientCtx = trusted.clientContext();

    try (SSLServerSocket server =
        (SSLServerSocket)
            serverCtx
                .getServerSocketFactory()
                .createServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      CompletableFuture<Void> accepted =
          CompletableFuture.runAsync(
              () -> {
                try (SSLSocket s = (SSLSocket) server.accept()) {
                  s.startHandshake();
                  OutputStream out = s.getOutputStream();
                  out.write(1);
                  out.flush();
                } catch (Exception e) {
                  // the client refused us: that is what some cases expect
                }
              });
      try (SSLSocket c =
          (SSLSocket)
              clientCtx.getSocketFactory().createSocket("localhost", server.getLocalPort())) {
        SSLParameters p = c.getSSLParameters();
        p.setEndpointIdentificationAlgorithm("HTTPS");
        c.setSSLParameters(p);
        c.startHandshake();
        InputStream in = c.getInputStream();
        boolean ok = in.read() == 1;
        accepted.get(5, TimeUnit.SECONDS);
        return ok;
      } catch (javax.net.ssl.SSLException e) {
        return false;
      }
    }
  }

  @Test
  void pemBundlesRoundTrip() {
    CaBundle b = CaBundle.of(List.of(CA.certificate()));
    assertThat(CaBundle.fromPem(b.pem()).certificates()).containsExactly(CA.certificate());
    assertThatThrownBy(() -> Pem.certificates("garbage"))
        .hasMessageContaining("no PEM certificate");
  }
}
