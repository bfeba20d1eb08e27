package org.standalonecinder.webhook.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.certs.CertificateAuthority;
import org.standalonecinder.certs.IssuedCertificate;

/**
 * A handshake's three calls (alias, chain, key) interleaved with rotations. Each row runs its steps
 * in order: {@code alias} is the handshake choosing, {@code rotate} the next certificate arriving,
 * {@code chain} and {@code key} the handshake asking for the chosen alias's. The outcome names the
 * certificate (0 the first, 1 the next, ...) each of chain and key came from, {@code -} for none.
 * Never a chain of one with the key of another: the server could only fail that handshake.
 */
class RotatingKeyManagerTest {

  private static final List<IssuedCertificate> ISSUED = new ArrayList<>();

  @BeforeAll
  static void issue() {
    CertificateAuthority ca =
        CertificateAuthority.generate("test-ca", Duration.ofDays(1), Clock.systemUTC());
    for (int i = 0; i < 3; i++) {
      ISSUED.add(
          ca.issueServing(List.of("localhost"), List.of(), Duration.ofHours(1), Clock.systemUTC()));
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "no rotation | alias chain key | 0 0",
        "rotation before the handshake | rotate alias chain key | 1 1",
        "rotation between alias and chain | alias rotate chain key | 0 0",
        "rotation between chain and key (the CI failure) | alias chain rotate key | 0 0",
        "two rotations during one handshake: nothing, not a mismatched pair"
            + " | alias rotate rotate chain key | - -",
      })
  void aHandshakeGetsOneCertificatesChainAndKey(String name, String steps, String outcome) {
    RotatingKeyManager manager = new RotatingKeyManager(ISSUED.get(0));
    int next = 1;
    String alias = null;
    X509Certificate[] chain = null;
    PrivateKey key = null;
    for (String step : steps.split(" ")) {
      switch (step) {
        case "alias" -> alias = manager.chooseEngineServerAlias("EC", null, null);
        case "rotate" -> manager.update(ISSUED.get(next++));
        case "chain" -> chain = manager.getCertificateChain(alias);
        case "key" -> key = manager.getPrivateKey(alias);
        default -> throw new IllegalArgumentException(step);
      }
    }
    assertThat(whose(chain) + " " + whose(key)).isEqualTo(outcome);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "the key's own type | EC | true",
        "a TLS 1.2 pair of it | EC_EC | true",
        "another type | RSA | false",
        "none | '' | false",
      })
  void onlyTheKeysOwnTypeGetsAnAlias(String name, String keyType, boolean answered) {
    RotatingKeyManager manager = new RotatingKeyManager(ISSUED.get(0));
    assertThat(ISSUED.get(0).key().getAlgorithm()).isEqualTo("EC");
    assertThat(manager.chooseEngineServerAlias(keyType, null, null) != null).isEqualTo(answered);
  }

  private static String whose(X509Certificate[] chain) {
    for (int i = 0; chain != null && i < ISSUED.size(); i++) {
      if (ISSUED.get(i).certificate().equals(chain[0])) {
        return String.valueOf(i);
      }
    }
    return "-";
  }

  private static String whose(PrivateKey key) {
    for (int i = 0; key != null && i < ISSUED.size(); i++) {
      if (ISSUED.get(i).key().equals(key)) {
        return String.valueOf(i);
      }
    }
    return "-";
  }
}
