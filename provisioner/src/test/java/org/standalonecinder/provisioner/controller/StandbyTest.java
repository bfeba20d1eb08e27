package org.standalonecinder.provisioner.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;
import org.standalonecinder.provisioner.provision.Fixtures;
import org.standalonecinder.provisioner.provision.Names;

/**
 * A replica that does not lead: its caches follow the cluster, it touches neither Cinder nor the
 * cluster, and the moment it leads it works on everything that arrived meanwhile.
 */
class StandbyTest {

  private io.fabric8.kubernetes.client.server.mock.KubernetesMockServer server;
  private KubernetesClient client;
  private final FakeCinderClient cinder = new FakeCinderClient();
  private ClaimController controller;

  @BeforeEach
  void start() {
    server = Cluster.newApiServer();
    client = server.createClient();
    controller =
        Cluster.controller(
            client,
            cinder,
            Fixtures.settings(),
            new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
    controller.pause();
    controller.start();
    Cluster.await("informers synced", controller::synced, Duration.ofSeconds(10));
  }

  @AfterEach
  void stop() {
    controller.close();
    client.close();
    Cluster.destroy(server);
  }

  private boolean hasPv(PersistentVolumeClaim c) {
    return client.persistentVolumes().withName(Names.pvName(c.getMetadata().getUid())).get()
        != null;
  }

  /** Waits until the standby holds the claim's key: it knows of the claim, and does nothing. */
  private void held(PersistentVolumeClaim c) {
    WorkKey key = new WorkKey.Claim(c.getMetadata().getNamespace(), c.getMetadata().getName());
    Cluster.await(
        "the standby holds " + key, () -> controller.waiting(key), Duration.ofSeconds(10));
  }

  @Test
  void aStandbyActsOnlyOnceItLeadsAndStopsTheMomentItDoesNot() {
    Processed processed = Processed.by(controller);
    Cluster.createClass(client, "cinder", Map.of());
    PersistentVolumeClaim first = Cluster.createClaim(client, "first", "cinder");
    // Its caches see the claim and its queue holds it; nothing else happens.
    held(first);
    assertThat(processed.none()).as("nothing worked on while standing by").isTrue();
    assertThat(controller.active()).isFalse();
    assertThat(cinder.log()).as("no Cinder call while standing by").isEmpty();
    assertThat(hasPv(first)).isFalse();
    assertThat(client.events().v1().events().inAnyNamespace().list().getItems()).isEmpty();

    // Leading: what arrived meanwhile is worked on.
    controller.resume();
    Cluster.await("the first claim's PV", () -> hasPv(first), Duration.ofSeconds(10));
    // The item in progress finishes: the volume is handed to its PV.
    Cluster.await(
        "the hand-over",
        () -> cinder.log().contains("updateVolumeMetadata vol-1"),
        Duration.ofSeconds(10));

    // Not leading any more: a new claim waits for the next leader.
    controller.pause();
    cinder.clearLog();
    PersistentVolumeClaim second = Cluster.createClaim(client, "second", "cinder");
    held(second);
    assertThat(hasPv(second)).isFalse();
    assertThat(cinder.log()).isEmpty();
    controller.resume();
    Cluster.await("the second claim's PV", () -> hasPv(second), Duration.ofSeconds(10));
  }
}
