package org.standalonecinder.provisioner.clone;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.controller.ClusterCache;
import org.standalonecinder.provisioner.provision.Fixtures;
import org.standalonecinder.provisioner.provision.Names;

/**
 * What a provisioned claim is told: its volume id, and for a clone its source. A claim deleted
 * right after its PV was made is not an error: a retry would work on the cache's copy of a claim
 * that is gone.
 */
class CloneMarkingTest {

  private KubernetesMockServer server;
  private KubernetesClient client;

  @BeforeEach
  void start() {
    server = Cluster.newApiServer();
    client = server.createClient();
  }

  @AfterEach
  void stop() {
    client.close();
    Cluster.destroy(server);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "a plain claim gets its volume id,                      true,  ,          ",
    "a clone gets its volume id and its source,             true,  apps/src,  apps/src",
    "a plain claim that is gone is left alone,              false, ,          ",
    "a clone that is gone is left alone (not retried),      false, apps/src,  ",
  })
  void aProvisionedClaimIsMarkedUnlessItIsGone(
      String name, boolean exists, String cloneOf, String markedCloneOf) {
    PersistentVolumeClaim claim = Fixtures.claimOf(null, "copy", "1Gi", "Filesystem");
    claim.getMetadata().setNamespace("apps");
    if (exists) {
      claim = client.persistentVolumeClaims().inNamespace("apps").resource(claim).create();
    }
    Map<String, String> pvAnnotations = new HashMap<>();
    pvAnnotations.put(ClaimAnnotations.VOLUME_ID, "vol-1");
    if (cloneOf != null) {
      pvAnnotations.put(Names.ANN_CLONE_OF, cloneOf);
    }
    PersistentVolume pv =
        new PersistentVolumeBuilder()
            .withNewMetadata()
            .withName(Names.pvName(claim.getMetadata().getUid()))
            .withAnnotations(pvAnnotations)
            .endMetadata()
            .build();

    new CloneMarking(client, new ClusterCache(client, Duration.ofMinutes(1))).mark(claim, pv);

    PersistentVolumeClaim after =
        client.persistentVolumeClaims().inNamespace("apps").withName("copy").get();
    if (!exists) {
      assertThat(after).as("nothing made of a claim that is gone").isNull();
      return;
    }
    assertThat(after.getMetadata().getAnnotations())
        .containsEntry(ClaimAnnotations.VOLUME_ID, "vol-1");
    assertThat(after.getMetadata().getAnnotations().get(ClaimAnnotations.CLONE_OF))
        .isEqualTo(markedCloneOf);
  }
}
