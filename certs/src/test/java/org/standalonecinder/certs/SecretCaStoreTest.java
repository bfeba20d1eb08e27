package org.standalonecinder.certs;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.standalonecinder.certs.CertificateSourceTest.MovableClock;

/** The CA in a Secret: created once, shared, rotated at 2/3 with an overlap. */
@EnableKubernetesMockClient(crud = true)
class SecretCaStoreTest {

  static KubernetesClient client;

  private static final Instant T0 = Instant.parse("2026-11-22T00:00:00Z");
  private final MovableClock clock = new MovableClock(T0);

  private SecretCaStore store() {
    return new SecretCaStore(
        client,
        "standalone-cinder",
        "webhook-ca",
        "webhook-ca",
        Duration.ofDays(30),
        RenewalPolicy.TWO_THIRDS,
        clock);
  }

  @AfterEach
  void clean() {
    client.secrets().inAnyNamespace().delete();
  }

  @Test
  void createdOnceAndSharedByEveryReplica() {
    SecretCaStore.Loaded first = store().loadOrCreate();
    SecretCaStore.Loaded second = store().loadOrCreate();
    assertThat(second.ca().certificate()).isEqualTo(first.ca().certificate());
    assertThat(second.trust().certificates()).containsExactly(first.ca().certificate());
    Secret s = client.secrets().inNamespace("standalone-cinder").withName("webhook-ca").get();
    assertThat(s.getType()).isEqualTo("kubernetes.io/tls");
    assertThat(s.getData()).containsOnlyKeys("tls.crt", "tls.key");
  }

  @Test
  void rotatedWhenDueWithTheOldCaTrustedUntilItExpires() {
    SecretCaStore.Loaded first = store().loadOrCreate();

    clock.now = T0.plus(Duration.ofDays(19));
    assertThat(store().loadOrCreate().ca().certificate()).isEqualTo(first.ca().certificate());

    clock.now = T0.plus(Duration.ofDays(21));
    SecretCaStore.Loaded rotated = store().loadOrCreate();
    assertThat(rotated.ca().certificate()).isNotEqualTo(first.ca().certificate());
    assertThat(rotated.trust().certificates())
        .containsExactly(rotated.ca().certificate(), first.ca().certificate());
    assertThat(store().loadOrCreate().trust().certificates())
        .as("another replica reads the same pair")
        .containsExactly(rotated.ca().certificate(), first.ca().certificate());

    clock.now = T0.plus(Duration.ofDays(31));
    assertThat(store().loadOrCreate().trust().certificates())
        .containsExactly(rotated.ca().certificate());
  }
}
