package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.standalonecinder.demo.Claims;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.Waits;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.ConnectionInfo;
import org.standalonecinder.provisioner.cinder.Connector;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.cinder.VolumeSpec;
import org.standalonecinder.provisioner.diagnostics.IscsiProbe;

/**
 * Moving from the Go standalone-cinder, on the real control plane and the real Cinder: a volume
 * exported as the Go provisioner exported it (os-reserve and os-initialize_connection with its
 * fixed connector), its PV and CHAP Secret as it wrote them, bound to a claim. Released while its
 * identity is not adopted, the PV and the volume stay and the PV gets one warning that names the
 * identity. Then the steps of docs/migration.md: the extra right of manifests/adopt-go and the
 * identity in the provisioner's settings (here its flag: the provisioner runs as a process, not
 * from the settings ConfigMap). The provisioner then deletes the volume in Cinder, the CHAP Secret
 * in the claim's namespace and the PV.
 */
@ExtendWith(Installed.class)
// Before KubeFaultsE2EIT: its API server outages may cost the provisioner its Lease, and a
// provisioner that loses it stops (a Pod's would be restarted; nothing restarts it here).
@Order(7)
class GoMigrationE2EIT {

  /** What the Go provisioner sent Cinder for every export (its volumeservice package). */
  private static final Connector GO_CONNECTOR =
      new Connector("iqn.1994-05.com.redhat:a13fc3d1cc22", "localhost", "127.0.0.1", false);

  private static final String CLASS =
      """
      apiVersion: storage.k8s.io/v1
      kind: StorageClass
      metadata: {name: e2e-go}
      provisioner: openstack.org/standalone-cinder
      reclaimPolicy: Delete
      """;

  @Test
  void aGoProvisionersPvIsLeftAloneUntilItsIdentityIsAdoptedThenReleasedAsTheGoOneDid(
      LocalInstall it) throws Exception {
    it.kubectl.ok(CLASS, "apply", "-f", "-");
    String ns = it.namespace("e2e-go");
    String goIdentity = UUID.randomUUID().toString();
    String pvName = "pvc-" + UUID.randomUUID();
    String secretName = pvName + "-secret";

    // What the Go provisioner did for a claim: create, reserve, initialize with its connector.
    Volume v =
        it.cinder.createVolume(
            new VolumeSpec(
                pvName,
                1,
                null,
                null,
                "made as the Go provisioner did",
                Map.of(),
                null,
                null,
                null));
    it.cinder.awaitVolumeStatus(
        v.id(), Set.of("available"), Backoff.DEFAULT.withDeadline(Duration.ofMinutes(2)));
    it.cinder.reserve(v.id());
    ConnectionInfo conn = it.cinder.initializeConnection(v.id(), GO_CONNECTOR);
    assertThat(conn.driverVolumeType()).isEqualTo("iscsi");
    Map<String, Object> d = conn.data();
    assertThat(d.get("auth_method")).as("the test Cinder exports with CHAP").isEqualTo("CHAP");
    it.admin
        .secrets()
        .inNamespace(ns)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName(secretName)
                .withNamespace(ns)
                .endMetadata()
                .withType("kubernetes.io/iscsi-chap")
                .withStringData(
                    Map.of(
                        "node.session.auth.username", String.valueOf(d.get("auth_username")),
                        "node.session.auth.password", String.valueOf(d.get("auth_password"))))
                .build())
        .create();
    PersistentVolume goPv =
        new PersistentVolumeBuilder()
            .withNewMetadata()
            .withName(pvName)
            .addToAnnotations("pv.kubernetes.io/provisioned-by", "openstack.org/standalone-cinder")
            .addToAnnotations("standaloneCinderProvisionerIdentity", goIdentity)
            .addToAnnotations("cinderVolumeId", v.id())
            .endMetadata()
            .withNewSpec()
            .withCapacity(Map.of("storage", new Quantity("1Gi")))
            .withAccessModes("ReadWriteOnce")
            .withStorageClassName("e2e-go")
            .withPersistentVolumeReclaimPolicy("Delete")
            .withNewClaimRef()
            .withNamespace(ns)
            .withName("legacy")
            .endClaimRef()
            .withNewIscsi()
            .withTargetPortal(String.valueOf(d.get("target_portal")))
            .withIqn(String.valueOf(d.get("target_iqn")))
            .withLun(((Number) d.get("target_lun")).intValue())
            .withChapAuthSession(true)
            .withNewSecretRef()
            .withName(secretName)
            .endSecretRef()
            .endIscsi()
            .endSpec()
            .build();
    it.admin.persistentVolumes().resource(goPv).create();
    it.kubectl.ok(Claims.yaml(ns, "legacy", "e2e-go", ""), "apply", "-f", "-");
    PersistentVolume bound = it.claims.bound(ns, "legacy");
    assertThat(bound.getMetadata().getName()).isEqualTo(pvName);
    // The node's view of the PV works as the Go provisioner left it.
    Secret chap = it.admin.secrets().inNamespace(ns).withName(secretName).get();
    IscsiProbe.Result rw =
        IscsiProbe.Target.of(bound.getSpec().getIscsi(), chap)
            .io("write -P 0x6f 0 64k", "read -P 0x6f 0 64k");
    assertThat(rw.ok()).as(rw.output()).isTrue();

    // Released while its identity is not adopted: left alone, and said once.
    it.kubectl.ok(null, "delete", "pvc", "legacy", "-n", ns, "--timeout=60s");
    Waits.await(
        "the warning on the released PV",
        () -> !notMine(it, pvName).isEmpty(),
        Duration.ofSeconds(60));
    assertThat(notMine(it, pvName))
        .singleElement()
        .asString()
        .contains("identity '" + goIdentity + "'", "Cinder volume " + v.id(), "ADOPT_IDENTITIES");
    assertThat(it.kubectl.ok(null, "describe", "pv", pvName).out())
        .as("where an admin looks")
        .contains("VolumeNotMine");
    assertThat(it.admin.persistentVolumes().withName(pvName).get()).isNotNull();
    assertThat(it.cinder.getVolume(v.id())).isPresent();
    assertThat(it.admin.secrets().inNamespace(ns).withName(secretName).get()).isNotNull();

    // docs/migration.md, as written: find the identity, grant the extra right, then adopt.
    Map<String, List<String>> steps =
        InstallDocsE2EIT.testedSections(
            java.nio.file.Files.readString(it.root.resolve("docs/migration.md")));
    assertThat(steps.keySet())
        .containsExactly(
            "1. Find the identities", "The extra right (kustomize)", "4. When none is left");
    assertThat(run(it, steps.get("1. Find the identities")))
        .as("the listing names the Go identity once, with its one PV")
        .containsPattern("(?m)^\\s*1 " + goIdentity + "$");
    run(it, steps.get("The extra right (kustomize)"));
    try {
      it.processes.stop("provisioner");
      it.processes.restart("provisioner", List.of("--adopt-identities", goIdentity));

      Waits.await(
          "the adopted PV torn down",
          () -> it.admin.persistentVolumes().withName(pvName).get() == null,
          Duration.ofSeconds(90));
      assertThat(it.cinder.getVolume(v.id())).as("the Cinder volume").isEmpty();
      assertThat(it.admin.secrets().inNamespace(ns).withName(secretName).get())
          .as("the Go provisioner's CHAP Secret in the claim's namespace")
          .isNull();
      assertThat(chapLogin(bound, chap)).as("the target refuses the login").isFalse();
      assertThat(run(it, steps.get("1. Find the identities"))).doesNotContain(goIdentity);
    } finally {
      it.processes.stop("provisioner");
      it.processes.restart("provisioner");
      run(it, steps.get("4. When none is left"));
    }
  }

  /** Runs a section's blocks in bash from the checkout, as the admin; returns what they printed. */
  private static String run(LocalInstall it, List<String> blocks) throws Exception {
    StringBuilder out = new StringBuilder();
    for (String block : blocks) {
      ProcessBuilder pb =
          new ProcessBuilder("bash", "-euo", "pipefail", "-c", block)
              .directory(it.root.toFile())
              .redirectErrorStream(true);
      pb.environment().put("KUBECONFIG", it.kubeEnv.get("KUBE_LOCAL_KUBECONFIG"));
      // The kubectl the installation uses (kube-local's own build where none is installed).
      pb.environment()
          .put(
              "PATH",
              java.nio.file.Path.of(it.kubeEnv.get("KUBE_LOCAL_KUBECTL")).getParent()
                  + ":"
                  + System.getenv("PATH"));
      Process p = pb.start();
      String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).as(block + "\n" + text).isZero();
      out.append(text);
    }
    return out.toString();
  }

  private static boolean chapLogin(PersistentVolume pv, Secret chap) throws Exception {
    return IscsiProbe.Target.of(pv.getSpec().getIscsi(), chap).io("read 0 4k").ok();
  }

  /** The provisioner's VolumeNotMine warnings on a PV, as kubectl describe finds them. */
  private static List<String> notMine(LocalInstall it, String pv) {
    return it.admin.events().v1().events().inAnyNamespace().list().getItems().stream()
        .filter(e -> pv.equals(e.getRegarding().getName()))
        .filter(e -> "VolumeNotMine".equals(e.getReason()))
        .map(e -> e.getNote())
        .toList();
  }
}
