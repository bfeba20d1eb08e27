package org.standalonecinder.provisioner.clone;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.controller.ClusterCache;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.provision.Names;

/**
 * A clone's protection of its source is released wherever the cache lets it be found, and at no
 * cost a tenant controls. The cache keeps a claim's first 32 finalizers of ours and a mark for the
 * rest; the attack marks many claims so, hoping each deletion of a claim of ours asks the API
 * server for every one of them.
 */
class SourceProtectionTest {

  private static final String CLONE = "0b9e8c1e-0000-4000-8000-000000000001";

  private KubernetesMockServer server;
  private KubernetesClient client;
  private ClusterCache cache;
  private SourceProtection protection;

  @BeforeEach
  void start() {
    server = Cluster.newApiServer();
    client = server.createClient();
    cache = new ClusterCache(client, Duration.ofMinutes(5));
  }

  @AfterEach
  void stop() {
    cache.close();
    client.close();
    Cluster.destroy(server);
  }

  private void claim(String ns, String name, List<String> finalizers) {
    client
        .persistentVolumeClaims()
        .inNamespace(ns)
        .resource(
            new PersistentVolumeClaimBuilder()
                .withNewMetadata()
                .withName(name)
                .withNamespace(ns)
                .withFinalizers(finalizers)
                .endMetadata()
                .withNewSpec()
                .withStorageClassName("other")
                .endSpec()
                .build())
        .create();
  }

  private static List<String> ours(int before) {
    List<String> f = new ArrayList<>();
    IntStream.range(0, before).forEach(i -> f.add(Names.cloneFinalizer("other-clone-" + i)));
    f.add(Names.cloneFinalizer(CLONE));
    return f;
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "the source holds it among the first 32, known to this process | 3 | true",
        "the source holds it among the first 32, after a restart | 3 | false",
        "the source holds it past the first 32, known to this process | 40 | true",
      })
  void aCloneReleasesItsSourceAndNoMarkedClaimIsAskedFor(String name, int before, boolean known)
      throws Exception {
    claim("apps", "src", ours(before));
    // The attack: 200 claims of a tenant's, each marked as holding more of ours than kept.
    for (int i = 0; i < 200; i++) {
      claim("tenant", "marked-" + i, List.of(ClusterCache.MORE_OF_OURS));
    }
    Cluster.startCache(cache);
    Cluster.await("synced", cache::synced, Duration.ofSeconds(10));
    Cluster.await("every claim cached", () -> cache.claims().size() == 201, Duration.ofSeconds(10));
    protection = new SourceProtection(client, cache);
    if (known) {
      // The clone's own look: it finds the source holding its finalizer, and writes nothing.
      protection.protect(new ClaimRef("apps", "src"), uidOf("apps", "src"), CLONE);
    }
    int requests = server.getRequestCount();
    protection.release(CLONE);
    int asked = server.getRequestCount() - requests;

    PersistentVolumeClaim src =
        client.persistentVolumeClaims().inNamespace("apps").withName("src").get();
    assertThat(src.getMetadata().getFinalizers())
        .as("the clone's finalizer released")
        .doesNotContain(Names.cloneFinalizer(CLONE))
        .hasSize(before);
    assertThat(asked).as("API calls for one release (a GET and an update)").isLessThanOrEqualTo(4);
  }

  /**
   * The attack between two reads: the source resolved (its volume, its owner's consent) is deleted
   * and another claim created under its name before the clone's finalizer goes on. The new claim
   * gets no finalizer and the look fails to be tried again, resolving afresh.
   */
  @org.junit.jupiter.api.Test
  void aSourceCreatedAgainUnderItsNameIsNotTakenForTheOneResolved() {
    claim("apps", "src", List.of());
    Cluster.startCache(cache);
    protection = new SourceProtection(client, cache);
    String resolved = "uid-of-the-claim-resolved-before";

    ProvisioningException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            ProvisioningException.class,
            () -> protection.protect(new ClaimRef("apps", "src"), resolved, CLONE));

    assertThat(e.isFinal()).as("the next look resolves the claim there now").isFalse();
    assertThat(e.getMessage()).contains("deleted and created again");
    assertThat(client.persistentVolumeClaims().inNamespace("apps").withName("src").get())
        .extracting(c -> c.getMetadata().getFinalizers())
        .asList()
        .isEmpty();
  }

  private String uidOf(String ns, String name) {
    return client
        .persistentVolumeClaims()
        .inNamespace(ns)
        .withName(name)
        .get()
        .getMetadata()
        .getUid();
  }
}
