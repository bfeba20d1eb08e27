package org.standalonecinder.provisioner.plugin;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.TypedLocalObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.api.CloneRequest;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.controller.ClaimController;
import org.standalonecinder.provisioner.controller.Cluster;
import org.standalonecinder.provisioner.controller.Processed;
import org.standalonecinder.provisioner.provision.Fixtures;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * What a claim's deletion costs Cinder. The attack: a tenant makes claims by the hundred that are
 * refused before Cinder is asked, then deletes them all; each deletion once cost Cinder two volume
 * listings (by the claim's identity and by its name), so a tenant could keep cinder-api busy at
 * will. A claim whose volume this process asked Cinder for is still looked up and its leftovers
 * deleted at once, not at the next resync (30 s here, longer than each row waits).
 */
class DeletedClaimsTest {

  private static final int CLAIMS = 100;

  /** How the claims came to be deleted, and what their deletion must cost. */
  enum Row {
    /** Refused before Cinder is asked: a filesystem shared read-write. */
    REFUSED_BEFORE_CINDER(false, false),
    /** The volume made, then the export failing and its undo too: the volume is left. */
    VOLUME_LEFT_BY_A_FAILED_EXPORT(true, true),
    /**
     * A restore from a backup that another process cut short: its volume carries the backup's
     * identity, which no sweep finds; this process never asked Cinder for it.
     */
    RESTORE_CUT_SHORT_BY_ANOTHER_PROCESS(true, true);

    final boolean looksUp;
    final boolean volumeDeleted;

    Row(boolean looksUp, boolean volumeDeleted) {
      this.looksUp = looksUp;
      this.volumeDeleted = volumeDeleted;
    }
  }

  private io.fabric8.kubernetes.client.server.mock.KubernetesMockServer server;
  private KubernetesClient client;
  private final FakeCinderClient cinder = new FakeCinderClient();
  private final ProvisionerSettings settings = Fixtures.settings();
  private ClaimController controller;
  private Processed processed;

  @BeforeEach
  void start() {
    server = Cluster.newApiServer();
    client = server.createClient();
    controller =
        Cluster.controller(
            client,
            cinder,
            settings,
            new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
    processed = Processed.by(controller);
    controller.start();
    await("informers synced", controller::synced);
    await("the first housekeeping", () -> cinder.log().contains("findVolumes null"));
    Cluster.createClass(client, "cinder", Map.of());
  }

  @AfterEach
  void stop() {
    controller.close();
    client.close();
    Cluster.destroy(server);
  }

  private static void await(String what, BooleanSupplier condition) {
    Cluster.await(what, condition, Duration.ofSeconds(10));
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Row.class)
  void aDeletedClaimCostsCinderALookUpOnlyIfItsVolumeMayExist(Row row) {
    int n = row == Row.REFUSED_BEFORE_CINDER ? CLAIMS : 1;
    List<String> names = new ArrayList<>();
    List<String> seeded = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String name = "c" + i;
      names.add(name);
      PersistentVolumeClaim c = create(row, name);
      if (row == Row.RESTORE_CUT_SHORT_BY_ANOTHER_PROCESS) {
        seeded.add(seedRestoredUnderAnotherIdentity(c.getMetadata().getUid()).id());
      }
      if (row == Row.VOLUME_LEFT_BY_A_FAILED_EXPORT) {
        await("the volume left behind", () -> cinder.log().contains("deleteAttachment att-2"));
      } else {
        processed.claim("apps", name);
      }
    }
    int volumesBefore = cinder.volumes().size();
    assertThat(volumesBefore)
        .as("volumes before the deletions")
        .isEqualTo(row == Row.REFUSED_BEFORE_CINDER ? 0 : 1);
    cinder.clearLog();

    for (String name : names) {
      client.persistentVolumeClaims().inNamespace("apps").withName(name).delete();
    }
    for (String name : names) {
      processed.await(Processed.claimKey("apps", name), o -> o == null);
    }

    // The look-up is a step off the loop's workers: it may come a moment after the deletion's
    // look returned.
    if (row.looksUp) {
      await(
          "Cinder asked for the claim's volume",
          () -> cinder.log().stream().anyMatch(l -> l.startsWith("findVolumes pvc-")));
    }
    List<String> lookUps =
        cinder.log().stream().filter(l -> l.startsWith("findVolumes pvc-")).toList();
    if (!row.looksUp) {
      assertThat(lookUps).as("Cinder asked about " + n + " deleted claims").isEmpty();
    }
    if (row.volumeDeleted) {
      await("the left volume deleted", () -> cinder.volumes().isEmpty());
      assertThat(cinder.attachments()).isEmpty();
    } else {
      assertThat(cinder.volumes()).hasSize(volumesBefore);
    }
  }

  private PersistentVolumeClaim create(Row row, String name) {
    return switch (row) {
      case REFUSED_BEFORE_CINDER -> claim(name, false, "ReadWriteMany");
      case VOLUME_LEFT_BY_A_FAILED_EXPORT -> {
        cinder.failNext(
            "completeAttachment", () -> new CinderException.Unavailable("down", 503, null, null));
        cinder.failNext(
            "deleteAttachment", () -> new CinderException.Unavailable("down", 503, null, null));
        // Cinder stays down for the retries, so nothing but the deletion cleans up: the look
        // that makes the volume and the one that finds it made go through.
        cinder.failNext("findVolumes", () -> null);
        cinder.failNext("findVolumes", () -> null);
        for (int i = 0; i < 10; i++) {
          cinder.failNext(
              "findVolumes", () -> new CinderException.Unavailable("down", 503, null, null));
        }
        yield claim(name, false, "ReadWriteOnce");
      }
      case RESTORE_CUT_SHORT_BY_ANOTHER_PROCESS -> claim(name, true, "ReadWriteOnce");
    };
  }

  private PersistentVolumeClaim claim(String name, boolean restore, String accessMode) {
    PersistentVolumeClaim c = Fixtures.claimOf(null, name, "1Gi", "Filesystem", accessMode);
    Map<String, String> ann = new HashMap<>();
    ann.put(ClaimAnnotations.STORAGE_PROVISIONER, ProvisionerSettings.DEFAULT_NAME);
    c.getMetadata().setAnnotations(ann);
    if (restore) {
      c.getSpec()
          .setDataSource(
              new TypedLocalObjectReferenceBuilder()
                  .withApiGroup(CloneRequest.SNAPSHOT_GROUP)
                  .withKind(CloneRequest.SNAPSHOT_KIND)
                  .withName("no-such-snapshot")
                  .build());
    }
    return client.persistentVolumeClaims().inNamespace("apps").resource(c).create();
  }

  /** What Cinder's backup restore leaves: the claim's name, the backup's source's identity. */
  private Volume seedRestoredUnderAnotherIdentity(String claimUid) {
    Map<String, String> md = new LinkedHashMap<>(Names.identifying("uid-of-the-source", "c"));
    md.put(Names.META_STATE, Names.STATE_PROVISIONED);
    md.put("src_backup_id", "backup-1");
    return cinder.seed(
        new Volume(
            "restored-" + claimUid,
            Names.pvName(claimUid),
            "available",
            1,
            "nova",
            "__DEFAULT__",
            md,
            null,
            null,
            false,
            null));
  }
}
