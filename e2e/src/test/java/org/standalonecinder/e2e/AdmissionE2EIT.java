package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.standalonecinder.e2e.ClaimLifecycleE2EIT.CLASSES;
import static org.standalonecinder.e2e.ClaimLifecycleE2EIT.claim;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhook;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhook;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.demo.Kubectl;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.Waits;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.provision.Names;

/**
 * The webhook as the real API server calls it: by url over TLS it trusts only through the caBundle
 * the webhook injected itself, with the API server's own AdmissionReviews and patch handling, while
 * users type kubectl. Every denial is checked as kubectl prints it. The webhook takes reviews only
 * from the API server here (--client-ca, as docs/install.md advises), so that it judges the
 * sources; the last test shows the install as it comes, which does not.
 */
@ExtendWith(Installed.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Order(2)
class AdmissionE2EIT {

  private LocalInstall it;
  private String ns;
  private Volume source;

  @BeforeAll
  void source(LocalInstall installation) throws Exception {
    it = installation;
    it.webhookAuthenticatesCallers(true);
    it.kubectl.ok(CLASSES, "apply", "-f", "-");
    ns = it.namespace("e2e-admit");
    it.kubectl.ok(claim(ns, "src", "e2e-cinder", ""), "apply", "-f", "-");
    PersistentVolume pv = it.claims.bound(ns, "src");
    source =
        it.cinder
            .getVolume(pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID))
            .orElseThrow();
  }

  @AfterAll
  void asItComes() throws Exception {
    it.webhookAuthenticatesCallers(false);
  }

  private Kubectl.Result create(String yaml, String... extra) {
    String[] args =
        Stream.concat(Stream.of("create", "-f", "-"), Stream.of(extra)).toArray(String[]::new);
    return it.kubectl.run(yaml, args);
  }

  private List<Volume> volumesOfThisRun() {
    return it.cinder.findVolumes(null, Map.of(Names.META_CLUSTER, it.clusterId));
  }

  @Test
  @Order(1)
  void theWebhookInjectedItsCaIntoOurEntriesOfTheRealConfigurations() {
    String ca =
        new String(
            Base64.getDecoder()
                .decode(
                    it.admin
                        .secrets()
                        .inNamespace(LocalInstall.NS)
                        .withName("standalone-cinder-webhook-ca")
                        .get()
                        .getData()
                        .get("tls.crt")),
            StandardCharsets.UTF_8);
    var mutating =
        it.admin
            .admissionRegistration()
            .v1()
            .mutatingWebhookConfigurations()
            .withName("standalone-cinder")
            .get();
    var validating =
        it.admin
            .admissionRegistration()
            .v1()
            .validatingWebhookConfigurations()
            .withName("standalone-cinder")
            .get();
    assertThat(mutating.getWebhooks()).hasSize(2);
    assertThat(validating.getWebhooks()).hasSize(4);
    for (MutatingWebhook w : mutating.getWebhooks()) {
      assertThat(bundle(w.getClientConfig().getCaBundle())).as(w.getName()).contains(ca.trim());
      assertThat(w.getClientConfig().getUrl()).startsWith("https://127.0.0.1:");
    }
    for (ValidatingWebhook w : validating.getWebhooks()) {
      assertThat(bundle(w.getClientConfig().getCaBundle())).as(w.getName()).contains(ca.trim());
    }
  }

  private static String bundle(String base64) {
    assertThat(base64).isNotBlank();
    return new String(Base64.getDecoder().decode(base64), StandardCharsets.UTF_8);
  }

  @Test
  @Order(2)
  void aStorageClassWithAMisspeltParameterIsDeniedAsKubectlPrintsIt() {
    Kubectl.Result r =
        it.kubectl.run(
            """
            apiVersion: storage.k8s.io/v1
            kind: StorageClass
            metadata: {name: e2e-typo}
            provisioner: openstack.org/standalone-cinder
            parameters: {tpye: ssd}
            """,
            "apply",
            "-f",
            "-");
    assertThat(r.ok()).isFalse();
    assertThat(r.err())
        .contains(
            "admission webhook \"storageclasses.webhook.standalone-cinder.io\" denied the request")
        .contains("unknown parameter 'tpye'; did you mean 'type'?");
    assertThat(it.admin.storage().v1().storageClasses().withName("e2e-typo").get()).isNull();
  }

  @Test
  @Order(2)
  void aStorageClassIsNormalisedByThePatchTheApiServerApplies() {
    Kubectl.Result r =
        it.kubectl.run(
            """
            apiVersion: storage.k8s.io/v1
            kind: StorageClass
            metadata: {name: e2e-normalised}
            provisioner: openstack.org/standalone-cinder
            parameters: {smartClone: "True"}
            """,
            "apply",
            "-f",
            "-");
    assertThat(r.ok()).as(r.toString()).isTrue();
    assertThat(r.err())
        .contains("Warning: parameter smartClone: \"True\" is stored as smartclone: \"true\"");
    assertThat(
            it.admin
                .storage()
                .v1()
                .storageClasses()
                .withName("e2e-normalised")
                .get()
                .getParameters())
        .isEqualTo(Map.of("smartclone", "true"));
    it.kubectl.ok(null, "delete", "storageclass", "e2e-normalised");
  }

  static Stream<Arguments> denials() {
    return Stream.of(
        Arguments.of(
            "a source that does not exist",
            "ghost",
            "e2e-cinder",
            "1Gi",
            "",
            "source claim NS/ghost does not exist"),
        Arguments.of(
            "a class without smartclone",
            "src",
            "e2e-plain",
            "1Gi",
            "",
            "StorageClass e2e-plain does not allow cloning"),
        Arguments.of(
            "a request smaller than the source",
            "src",
            "e2e-cinder",
            "512Mi",
            "",
            "source claim NS/src holds 1Gi, more than this claim requests (512Mi)"),
        Arguments.of(
            "a CloneOf the user wrote",
            "src",
            "e2e-cinder",
            "1Gi",
            ", k8s.io/CloneOf: NS/src",
            "k8s.io/CloneOf is set by the provisioner only; remove it"),
        Arguments.of(
            "a malformed clone request",
            "a/src/x",
            "e2e-cinder",
            "1Gi",
            "",
            "k8s.io/CloneRequest"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("denials")
  @Order(3)
  void aCloneThatCannotBeIsDeniedWithItsReason(
      String name, String source, String className, String size, String extra, String message) {
    int before = volumesOfThisRun().size();
    String yaml =
        """
        apiVersion: v1
        kind: PersistentVolumeClaim
        metadata:
          name: denied
          namespace: %s
          annotations: {k8s.io/CloneRequest: "%s"%s}
        spec:
          storageClassName: %s
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: %s}}
        """
            .formatted(ns, source, extra.replace("NS", ns), className, size);
    Kubectl.Result r = create(yaml);
    assertThat(r.ok()).as(r.toString()).isFalse();
    assertThat(r.err())
        .contains("admission webhook \"claims.webhook.standalone-cinder.io\" denied the request")
        .contains(message.replace("NS", ns));
    assertThat(it.admin.persistentVolumeClaims().inNamespace(ns).withName("denied").get()).isNull();
    assertThat(volumesOfThisRun()).hasSize(before);
  }

  @Test
  @Order(4)
  void readWriteManyWithAFilesystemIsDenied() {
    Kubectl.Result r =
        create(
            """
            apiVersion: v1
            kind: PersistentVolumeClaim
            metadata: {name: shared-fs, namespace: %s}
            spec:
              storageClassName: e2e-cinder
              accessModes: [ReadWriteMany]
              resources: {requests: {storage: 1Gi}}
            """
                .formatted(ns));
    assertThat(r.ok()).isFalse();
    assertThat(r.err()).contains("ReadWriteMany needs volumeMode Block");
  }

  @Test
  @Order(5)
  void aServerSideDryRunOfACloneWritesNothingAndMakesNoVolume() {
    int before = volumesOfThisRun().size();
    Kubectl.Result r =
        create(claim(ns, "dry", "e2e-cinder", "k8s.io/CloneRequest: src"), "--dry-run=server");
    assertThat(r.ok()).as(r.toString()).isTrue();
    assertThat(r.out()).contains("persistentvolumeclaim/dry created (server dry run)");
    assertThat(it.admin.persistentVolumeClaims().inNamespace(ns).withName("dry").get()).isNull();
    assertThat(volumesOfThisRun()).hasSize(before);
  }

  @Test
  @Order(6)
  void anAdmittedCloneIsDefaultedMadeInCinderAndMarkedCloneOf() {
    Kubectl.Result r = create(claim(ns, "copy", "e2e-cinder", "k8s.io/CloneRequest: src"));
    assertThat(r.ok()).as(r.toString()).isTrue();
    PersistentVolume pv = it.claims.bound(ns, "copy");
    Waits.await(
        "k8s.io/CloneOf",
        () -> (ns + "/src").equals(annotations("copy").get("k8s.io/CloneOf")),
        Duration.ofSeconds(30));
    // The mutating webhook's patch, applied by the API server: the namespace is spelled out.
    assertThat(annotations("copy")).containsEntry("k8s.io/CloneRequest", ns + "/src");
    Volume copy =
        it.cinder
            .getVolume(pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID))
            .orElseThrow();
    assertThat(copy.sourceVolumeId()).isEqualTo(source.id());
  }

  /** Lets {@code user} create and read claims in {@code namespace}, nothing more. */
  private void mayCreateClaims(String namespace, String user) {
    mayUseClaims(namespace, user, "create,get,list");
  }

  private void mayUseClaims(String namespace, String user, String verbs) {
    it.kubectl.ok(
        null,
        "create",
        "role",
        "claims",
        "-n",
        namespace,
        "--verb=" + verbs,
        "--resource=persistentvolumeclaims");
    it.kubectl.ok(
        null,
        "create",
        "rolebinding",
        user + "-claims",
        "-n",
        namespace,
        "--role=claims",
        "--user=" + user);
  }

  private Map<String, String> annotations(String claim) {
    PersistentVolumeClaim c =
        it.admin.persistentVolumeClaims().inNamespace(ns).withName(claim).get();
    return c == null || c.getMetadata().getAnnotations() == null
        ? Map.of()
        : c.getMetadata().getAnnotations();
  }

  @Test
  @Order(9)
  void aSourceThatGrantsANamespaceMayBeClonedThereByWhoMayNotCreatePodsBesideIt() {
    String granted = it.namespace("e2e-granted");
    mayCreateClaims(granted, "bob");
    String wanted = claim(granted, "shared", "e2e-cinder", "k8s.io/CloneRequest: " + ns + "/src");
    Kubectl.Result before = create(wanted, "--as=bob", "--dry-run=server");
    assertThat(before.ok()).as("no grant yet").isFalse();
    assertThat(before.err()).contains("the source grants no clone to " + granted);
    // The source's owner grants the namespace (the owner may annotate their own claim).
    it.kubectl.ok(
        null, "annotate", "pvc", "src", "-n", ns, "standalone-cinder.io/clone-grant=" + granted);
    Kubectl.Result after = create(wanted, "--as=bob");
    assertThat(after.ok()).as(after.toString()).isTrue();
    it.claims.bound(granted, "shared");
  }

  /**
   * The ecosystem's form of the same consent: a ReferenceGrant (the Gateway API's kind, installed
   * here from a minimal CRD) in the source's namespace, from claims of the clone's namespace to the
   * source. The webhook admits the clone on it, and the provisioner, which reads it again when it
   * clones, makes it; the source carries no annotation.
   */
  /**
   * The attack on the controller-manager: a user grows her claim of a Ceph RBD class whose admin
   * allowed expansion after the claim was made (no in-tree rbd PV is made in a class that allows it
   * already). Kubernetes' expand controller takes in-tree rbd claims too, and on 1.20 it can crash
   * the whole controller-manager while another writer updates the claim (GrowthE2EIT). The webhook
   * refuses the growth where it is asked for, with the API server authenticated, so the claim never
   * asks for more and that controller has nothing to act on.
   */
  @Test
  @Order(11)
  void aCephRbdClaimsGrowthIsRefusedWhereItIsAskedFor() throws Exception {
    it.kubectl.ok(
        """
        apiVersion: storage.k8s.io/v1
        kind: StorageClass
        metadata: {name: e2e-admit-rbd}
        provisioner: openstack.org/standalone-cinder
        parameters: {type: lab-rbd, fsType: ext4}
        reclaimPolicy: Delete
        allowVolumeExpansion: false
        """,
        "apply",
        "-f",
        "-");
    String mine = it.namespace("e2e-growrbd");
    mayUseClaims(mine, "carol", "create,get,patch");
    it.kubectl.ok(claim(mine, "data", "e2e-admit-rbd", ""), "apply", "-f", "-");
    PersistentVolume pv = it.claims.bound(mine, "data");
    it.kubectl.ok(
        null, "patch", "storageclass", "e2e-admit-rbd", "-p", "{\"allowVolumeExpansion\":true}");
    String volumeId = pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);

    // The API server's resize admission reads classes from its informer, a moment behind the
    // patch: until then it refuses the growth itself, before the webhook is asked.
    Kubectl.Result grown = null;
    for (int i = 0; i < 30; i++) {
      grown =
          it.kubectl.run(
              null,
              "patch",
              "pvc",
              "data",
              "-n",
              mine,
              "--as=carol",
              "-p",
              "{\"spec\":{\"resources\":{\"requests\":{\"storage\":\"3Gi\"}}}}");
      if (grown.ok() || !grown.err().contains("must support resize")) {
        break;
      }
      Thread.sleep(1_000);
    }
    assertThat(grown.ok()).as(grown.toString()).isFalse();
    assertThat(grown.err())
        .contains(
            "admission webhook \"claim-updates.webhook.standalone-cinder.io\" denied the request",
            "claims on Ceph RBD volumes are not grown: PV "
                + pv.getMetadata().getName()
                + " is an in-tree rbd volume");
    PersistentVolumeClaim now =
        it.admin.persistentVolumeClaims().inNamespace(mine).withName("data").get();
    assertThat(now.getSpec().getResources().getRequests().get("storage"))
        .as("the claim asks for what it asked for")
        .hasToString("1Gi");
    assertThat(now.getStatus().getConditions()).as("no resize under way").isNullOrEmpty();
    assertThat(it.cinder.getVolume(volumeId).orElseThrow().sizeGib()).isEqualTo(1);
    ClaimLifecycleE2EIT.deleteAndAwaitTearDown(it, mine, "data", pv, volumeId);
    it.kubectl.ok(null, "delete", "storageclass", "e2e-admit-rbd");
  }

  @Test
  @Order(11)
  void aReferenceGrantInTheSourcesNamespaceLetsItBeCloned() throws Exception {
    it.kubectl.ok(
        java.nio.file.Files.readString(
            java.nio.file.Path.of("src/test/resources/referencegrant-crd.yaml")),
        "apply",
        "-f",
        "-");
    it.kubectl.ok(
        null,
        "wait",
        "--for=condition=Established",
        "crd/referencegrants.gateway.networking.k8s.io",
        "--timeout=60s");
    it.kubectl.ok(null, "annotate", "pvc", "src", "-n", ns, "standalone-cinder.io/clone-grant-");
    String referring = it.namespace("e2e-referring");
    mayCreateClaims(referring, "carol");
    String wanted = claim(referring, "copy", "e2e-cinder", "k8s.io/CloneRequest: " + ns + "/src");
    Kubectl.Result before = create(wanted, "--as=carol", "--dry-run=server");
    assertThat(before.ok()).as("no grant yet").isFalse();
    assertThat(before.err()).contains("or a ReferenceGrant in " + ns);
    it.kubectl.ok(
        "apiVersion: gateway.networking.k8s.io/v1beta1\n"
            + "kind: ReferenceGrant\n"
            + "metadata: {name: clones-for-"
            + referring
            + ", namespace: "
            + ns
            + "}\n"
            + "spec:\n"
            + "  from: [{group: '', kind: PersistentVolumeClaim, namespace: "
            + referring
            + "}]\n"
            + "  to: [{group: '', kind: PersistentVolumeClaim, name: src}]\n",
        "apply",
        "-f",
        "-");
    Kubectl.Result after = create(wanted, "--as=carol");
    assertThat(after.ok()).as(after.toString()).isTrue();
    PersistentVolume pv = it.claims.bound(referring, "copy");
    Volume copy =
        it.cinder
            .getVolume(pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID))
            .orElseThrow();
    assertThat(copy.sourceVolumeId()).isEqualTo(source.id());
  }

  @Test
  @Order(8)
  void anExemptNamespaceIsNotJudgedOnceThePolicySaysSo() throws Exception {
    String exempt = it.namespace("e2e-exempt");
    it.kubectl.ok(null, "label", "namespace", exempt, "policy.standalone-cinder.io/exempt=true");
    String wanted = claim(exempt, "anything", "e2e-cinder", "k8s.io/CloneRequest: ghost");
    assertThat(create(wanted, "--dry-run=server").ok())
        .as("judged under the default policy")
        .isFalse();
    String before = java.nio.file.Files.readString(it.policyFile);
    try {
      // As the kubelet updates the mounted ConfigMap after an admin's edit.
      java.nio.file.Files.writeString(
          it.policyFile,
          before
              + "exemptNamespaces:\n  matchLabels: {policy.standalone-cinder.io/exempt: \"true\"}\n");
      Waits.await(
          "the edited policy in force",
          () -> create(wanted, "--dry-run=server").ok(),
          Duration.ofSeconds(30));
    } finally {
      java.nio.file.Files.writeString(it.policyFile, before);
    }
    Waits.await(
        "the policy restored",
        () -> !create(wanted, "--dry-run=server").ok(),
        Duration.ofSeconds(30));
  }

  /**
   * The webhook in audit mode lets anything through; the provisioner alone must keep a claim from
   * copying a volume it does not own. On a real API server a user can name another claim's PV in
   * {@code spec.volumeName} but cannot make the binder bind it: the would-be source stays Pending.
   */
  @Test
  @Order(10)
  void inAuditModeTheProvisionerAloneRefusesASourceThatNamesAnotherClaimsPv() throws Exception {
    String thief = it.namespace("e2e-thief");
    String victimPv =
        it.admin
            .persistentVolumeClaims()
            .inNamespace(ns)
            .withName("src")
            .get()
            .getSpec()
            .getVolumeName();
    String pocket =
        """
        apiVersion: v1
        kind: PersistentVolumeClaim
        metadata: {name: pocket, namespace: %s}
        spec:
          storageClassName: ""
          volumeName: %s
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: 1Gi}}
        """
            .formatted(thief, victimPv);
    it.kubectl.ok(pocket, "create", "-f", "-");
    String loot = claim(thief, "loot", "e2e-cinder", "k8s.io/CloneRequest: pocket");
    String before = java.nio.file.Files.readString(it.policyFile);
    int volumes = volumesOfThisRun().size();
    try {
      java.nio.file.Files.writeString(
          it.policyFile, before.replace("mode: enforce", "mode: audit"));
      Waits.await(
          "audit mode in force",
          () -> create(loot, "--dry-run=server").ok(),
          Duration.ofSeconds(30));
      Kubectl.Result admitted = create(loot);
      assertThat(admitted.ok()).as(admitted.toString()).isTrue();
      assertThat(admitted.err()).as("audit mode says what it would deny").contains("Warning");
    } finally {
      java.nio.file.Files.writeString(it.policyFile, before);
    }
    // The next tests expect enforcement: the webhook reads the file again within 2 s.
    String probe = claim(thief, "probe", "e2e-cinder", "k8s.io/CloneRequest: ghost");
    Waits.await(
        "enforce mode in force again",
        () -> !create(probe, "--dry-run=server").ok(),
        Duration.ofSeconds(30));
    Waits.await(
        "the provisioner's refusal",
        () ->
            it.admin.events().v1().events().inNamespace(thief).list().getItems().stream()
                .anyMatch(
                    e ->
                        "loot".equals(e.getRegarding().getName())
                            && "ProvisioningFailed".equals(e.getReason())
                            && e.getNote()
                                .contains("source claim " + thief + "/pocket is not Bound")),
        Duration.ofSeconds(30));
    assertThat(
            it.admin
                .persistentVolumeClaims()
                .inNamespace(thief)
                .withName("pocket")
                .get()
                .getStatus()
                .getPhase())
        .as("the binder does not bind a PV bound to another claim")
        .isEqualTo("Pending");
    assertThat(
            it.admin
                .persistentVolumeClaims()
                .inNamespace(thief)
                .withName("loot")
                .get()
                .getSpec()
                .getVolumeName())
        .isNullOrEmpty();
    assertThat(volumesOfThisRun()).as("no volume made for the thief").hasSize(volumes);
    assertThat(
            it.admin
                .persistentVolumeClaims()
                .inNamespace(ns)
                .withName("src")
                .get()
                .getMetadata()
                .getFinalizers())
        .as("the victim is not even protected for a clone")
        .doesNotContain(
            "standalone-cinder.io/clone-in-progress-"
                + it.admin
                    .persistentVolumeClaims()
                    .inNamespace(thief)
                    .withName("loot")
                    .get()
                    .getMetadata()
                    .getUid());
    it.kubectl.ok(null, "delete", "pvc", "loot", "pocket", "-n", thief, "--wait=false");
  }

  @Test
  @Order(7)
  void acrossNamespacesOnlyWhoMayCreatePodsThereClonesDecidedByARealSubjectAccessReview()
      throws Exception {
    String target = it.namespace("e2e-target");
    // alice may manage claims in her namespace, nothing in the source's.
    mayCreateClaims(target, "alice");
    String wanted = claim(target, "stolen", "e2e-cinder", "k8s.io/CloneRequest: " + ns + "/src");
    Kubectl.Result denied = create(wanted, "--as=alice");
    assertThat(denied.ok()).as(denied.toString()).isFalse();
    assertThat(denied.err())
        .contains(
            "cloning "
                + ns
                + "/src into namespace "
                + target
                + " is not allowed: you may not create pods in "
                + ns
                + " and the source grants no clone to "
                + target);

    // Once alice may create pods in the source's namespace (and so could read it anyway), a real
    // SubjectAccessReview allows the clone: the webhook knows the API server sent the review.
    it.kubectl.ok(null, "create", "role", "pods", "-n", ns, "--verb=create", "--resource=pods");
    it.kubectl.ok(
        null, "create", "rolebinding", "alice-pods", "-n", ns, "--role=pods", "--user=alice");
    Waits.await(
        "RBAC to reach the authorizer",
        () -> it.kubectl.run(null, "auth", "can-i", "create", "pods", "-n", ns, "--as=alice").ok(),
        Duration.ofSeconds(10));
    Kubectl.Result allowed = create(wanted.replace("stolen", "granted"), "--as=alice");
    assertThat(allowed.ok()).as(allowed.toString()).isTrue();
    it.claims.bound(target, "granted");
    PersistentVolumeClaim c =
        it.admin.persistentVolumeClaims().inNamespace(target).withName("granted").get();
    assertThat(c.getMetadata().getAnnotations()).containsKey("standalone-cinder.io/clone-token");
    Waits.await(
        "CloneOf across namespaces",
        () ->
            (ns + "/src")
                .equals(
                    it.admin
                        .persistentVolumeClaims()
                        .inNamespace(target)
                        .withName("granted")
                        .get()
                        .getMetadata()
                        .getAnnotations()
                        .get("k8s.io/CloneOf")),
        Duration.ofSeconds(30));
  }

  /**
   * The install as it comes (no --client-ca): any pod could have written a review, so the webhook
   * looks at no claim and asks no one's rights; it admits the clone with a warning that says where
   * it is checked, and the provisioner checks the source when it clones and tells the claim.
   */
  @Test
  @Order(12)
  void withoutCallerAuthenticationTheProvisionerChecksTheSourceAndTellsTheClaim() throws Exception {
    it.webhookAuthenticatesCallers(false);
    String target = it.namespace("e2e-unchecked");
    mayCreateClaims(target, "carol");
    int volumes = volumesOfThisRun().size();
    Kubectl.Result ghost =
        create(
            claim(target, "ghost-copy", "e2e-cinder", "k8s.io/CloneRequest: ghost"), "--as=carol");
    assertThat(ghost.ok()).as(ghost.toString()).isTrue();
    assertThat(ghost.err())
        .contains(
            "Warning: source claim "
                + target
                + "/ghost is checked by the provisioner when it clones");
    Kubectl.Result across =
        create(
            claim(target, "across", "e2e-cinder", "k8s.io/CloneRequest: " + ns + "/src"),
            "--as=carol");
    assertThat(across.ok()).as(across.toString()).isTrue();
    assertThat(across.err())
        .contains(
            "Warning: source claim "
                + ns
                + "/src, and whether it grants the clone to "
                + target
                + ", is checked by the provisioner when it clones");
    awaitRefusal(target, "ghost-copy", "source claim " + target + "/ghost does not exist");
    awaitRefusal(
        target,
        "across",
        "cloning "
            + ns
            + "/src across namespaces is refused: the source does not grant the clone to "
            + target);
    assertThat(
            it.admin
                .persistentVolumeClaims()
                .inNamespace(target)
                .withName("across")
                .get()
                .getMetadata()
                .getAnnotations())
        .as("no token signed for a review the webhook cannot tell from a forged one")
        .doesNotContainKey("standalone-cinder.io/clone-token");
    assertThat(volumesOfThisRun()).as("no volume made").hasSize(volumes);
    it.kubectl.ok(null, "delete", "pvc", "ghost-copy", "across", "-n", target, "--wait=false");
  }

  private void awaitRefusal(String namespace, String claim, String note) {
    Waits.await(
        "the provisioner's refusal of " + namespace + "/" + claim,
        () ->
            it.admin.events().v1().events().inNamespace(namespace).list().getItems().stream()
                .anyMatch(
                    e ->
                        claim.equals(e.getRegarding().getName())
                            && "ProvisioningFailed".equals(e.getReason())
                            && e.getNote() != null
                            && e.getNote().contains(note)),
        Duration.ofSeconds(30));
  }
}
