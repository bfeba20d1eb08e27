package org.standalonecinder.provisioner.plugin;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeStatusBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.controller.ClaimController;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.provision.Fixtures;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * A provisioner that dies after Cinder made a volume, a claim deleted while none runs, and the next
 * provisioner: it finds the volume in Cinder at start-up (memory is gone) and deletes it, and it
 * leaves alone every volume that is not that: one a PV references, one handed to a PV that is gone
 * (a retained volume), another cluster's.
 */
class RestartSweepTest {

  private io.fabric8.kubernetes.client.server.mock.KubernetesMockServer server;
  private KubernetesClient client;
  private final FakeCinderClient cinder = new FakeCinderClient();
  private final ProvisionerSettings settings = Fixtures.settings();
  private final List<ClaimController> controllers = new java.util.ArrayList<>();

  @AfterEach
  void stop() {
    controllers.forEach(ClaimController::close);
    if (client != null) {
      client.close();
      Cluster.destroy(server);
    }
  }

  private ClaimController controller(CinderClient c) {
    ClaimController pc =
        Cluster.controller(
            client, c, settings, new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
    controllers.add(pc);
    return pc;
  }

  /**
   * The Cinder a provisioner sees that dies once Cinder has made a volume: nothing more gets out.
   */
  private static final class Dying {
    final AtomicBoolean dead = new AtomicBoolean();
    final CountDownLatch died = new CountDownLatch(1);

    CinderClient around(CinderClient cinder) {
      return (CinderClient)
          Proxy.newProxyInstance(
              CinderClient.class.getClassLoader(),
              new Class<?>[] {CinderClient.class},
              (proxy, method, args) -> {
                if (dead.get() && !method.getName().equals("close")) {
                  throw new CinderException.Unavailable("the provisioner is dead", 0, null, null);
                }
                Object result;
                try {
                  result = method.invoke(cinder, args);
                } catch (InvocationTargetException e) {
                  throw e.getCause();
                }
                if (method.getName().equals("createVolume")) {
                  dead.set(true);
                  died.countDown();
                }
                return result;
              });
    }
  }

  /** A volume as provisioning leaves it in Cinder for a claim {@code apps/name} of that uid. */
  private Volume seed(String id, String uid, String name, String cluster, String state) {
    Map<String, String> md = new LinkedHashMap<>(Names.identifying(uid, cluster));
    md.put(Names.META_PVC_NAMESPACE, "apps");
    md.put(Names.META_PVC_NAME, name);
    md.put(Names.META_STATE, state);
    return cinder.seed(
        new Volume(
            id,
            Names.pvName(uid),
            "in-use",
            1,
            "nova",
            "__DEFAULT__",
            md,
            null,
            null,
            false,
            null));
  }

  @Test
  void aVolumeLeftByADeadProvisionerIsDeletedAtTheNextStartAndNothingElse() throws Exception {
    server = Cluster.newApiServer();
    client = server.createClient();
    Cluster.createClass(client, "cinder", Map.of());

    // The first provisioner dies right after Cinder made the claim's volume.
    Dying dying = new Dying();
    ClaimController first = controller(dying.around(cinder));
    first.start();
    Cluster.await("first synced", first::synced, Duration.ofSeconds(10));
    PersistentVolumeClaim doomed = Cluster.createClaim(client, "doomed", "cinder");
    assertThat(dying.died.await(10, TimeUnit.SECONDS)).isTrue();
    first.close();
    String left = Names.pvName(doomed.getMetadata().getUid());
    assertThat(cinder.volumes().values())
        .extracting(Volume::name, v -> v.metadata().get(Names.META_STATE))
        .containsExactly(org.assertj.core.groups.Tuple.tuple(left, Names.STATE_PROVISIONING));
    // Deleted while no provisioner runs: nobody remembers it.
    client.persistentVolumeClaims().inNamespace("apps").withName("doomed").delete();

    // What the next provisioner must not touch.
    seed("vol-with-pv", "uid-pv", "gone-with-pv", "cluster-a", Names.STATE_PROVISIONING);
    client
        .persistentVolumes()
        .resource(
            new PersistentVolumeBuilder()
                .withNewMetadata()
                .withName(Names.pvName("uid-pv"))
                .addToAnnotations(ClaimAnnotations.PROVISIONED_BY, ProvisionerSettings.DEFAULT_NAME)
                .addToAnnotations(Names.ANN_IDENTITY, settings.identity())
                .addToAnnotations(ClaimAnnotations.VOLUME_ID, "vol-with-pv")
                .endMetadata()
                .withNewSpec()
                .withCapacity(Map.of("storage", new Quantity("1Gi")))
                .withAccessModes("ReadWriteOnce")
                .withPersistentVolumeReclaimPolicy("Delete")
                .withNewClaimRef()
                .withNamespace("apps")
                .withName("gone-with-pv")
                .withUid("uid-pv")
                .endClaimRef()
                .endSpec()
                .withStatus(new PersistentVolumeStatusBuilder().withPhase("Bound").build())
                .build())
        .create();
    seed("vol-retained", "uid-retained", "retained", "cluster-a", Names.STATE_PROVISIONED);
    seed("vol-other-cluster", "uid-other", "theirs", "cluster-b", Names.STATE_PROVISIONING);

    ClaimController second = controller(cinder);
    second.start();
    Cluster.await(
        "the dead provisioner's volume deleted",
        () -> cinder.volumes().values().stream().noneMatch(v -> v.name().equals(left)),
        Duration.ofSeconds(10));
    // The other unfinished volume of this cluster has its PV: only the hand-over was missing
    // (the provisioner stopped between the PV and the hand-over), and the sweep completes it.
    Cluster.await(
        "the volume with a PV handed over",
        () ->
            Names.STATE_PROVISIONED.equals(
                cinder.volumes().get("vol-with-pv").metadata().get(Names.META_STATE)),
        Duration.ofSeconds(10));
    assertThat(cinder.volumes().keySet())
        .containsExactlyInAnyOrder("vol-with-pv", "vol-retained", "vol-other-cluster");
    assertThat(cinder.log())
        .filteredOn(l -> l.startsWith("deleteVolume"))
        .hasSize(1)
        .allMatch(l -> !l.contains("vol-with-pv") && !l.contains("vol-retained"));
  }
}
