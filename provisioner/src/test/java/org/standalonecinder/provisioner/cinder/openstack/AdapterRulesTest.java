package org.standalonecinder.provisioner.cinder.openstack;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** URL rules and token renewal points of the adapter. */
class AdapterRulesTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "http://h:8776/v3/abc, http://h:8776",
    "http://h:8776/v3, http://h:8776",
    "https://cloud.example/volume/v3/abc, https://cloud.example/volume",
    "https://cloud.example/volume/, https://cloud.example/volume"
  })
  void theVersionDocumentLivesAtTheApiRoot(String endpoint, String root) {
    assertThat(VersionDocument.apiRoot(endpoint)).isEqualTo(root);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "http://k:5000/v3, http://k:5000/v3",
    "http://k:5000/v3/, http://k:5000/v3",
    "http://k:5000, http://k:5000/v3",
    "https://k/identity, https://k/identity/v3"
  })
  void keystoneV3Base(String configured, String base) {
    assertThat(KeystoneAuthenticator.v3Base(URI.create(configured))).isEqualTo(base);
  }

  @ParameterizedTest(name = "life {0} min: renew {1} min before expiry")
  @CsvSource({"1440, 5", "60, 5", "10, 5", "8, 4", "2, 1"})
  void tokensAreRenewedBeforeTheyExpire(long lifeMinutes, long earlyMinutes) {
    Instant issued = Instant.parse("2026-11-22T00:00:00Z");
    Instant expires = issued.plus(Duration.ofMinutes(lifeMinutes));
    assertThat(TokenCache.renewalPoint(issued, expires))
        .isEqualTo(expires.minus(Duration.ofMinutes(earlyMinutes)));
  }
}
