package org.standalonecinder.provisioner.provision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.standalonecinder.provisioner.provision.Fixtures.PV;
import static org.standalonecinder.provisioner.provision.Fixtures.claim;
import static org.standalonecinder.provisioner.provision.Fixtures.claimOf;
import static org.standalonecinder.provisioner.provision.Fixtures.storageClass;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.SecretReference;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.mapping.RbdForm;
import org.standalonecinder.provisioner.mapping.RbdMapper;
import org.standalonecinder.provisioner.mapping.VolumeMappers;

/**
 * RBD claims through the whole provisioner with a fake Cinder that exports over RBD: the cephx key
 * read before any Cinder call, the Secret shared by PVs and removed with the last of them, and
 * every configuration problem a clear, retryable failure with nothing left in Cinder.
 */
class RbdProvisioningTest {

  static final String NS = "standalone-cinder";
  static final String KEY = "AQBa1Fxm7c3kHBAAyZ3J0c2VjcmV0LWtleS1mb3ItdGVzdA==";
  static final String SHARED = "cephx-rbd-cinder";
  static final String UID_B = "7c1d2e3f-2222-4e5a-9c1d-5e2f3a4b5c6d";

  static final String FIND = "findVolumes " + PV;
  static final String CREATE = "createVolume " + PV;
  static final String AWAIT = "awaitVolumeStatus vol-1";
  static final String LIST = "listAttachments vol-1";
  static final String ATTACH = "createAttachment vol-1";
  static final String COMPLETE = "completeAttachment att-2";
  static final String DETACH = "deleteAttachment att-2";
  static final String DELETE = "deleteVolume vol-1";

  private final FakeCinderClient cinder = new FakeCinderClient();
  private final FakeSecretStore secrets = new FakeSecretStore(cinder::note);
  private VolumeProvisioner provisioner = withDefaults(RbdForm.RBD, "cephx", null);

  private VolumeProvisioner withDefaults(RbdForm form, String cephxSecret, String clusterId) {
    return new VolumeProvisioner(
        cinder,
        secrets,
        VolumeMappers.standard(),
        Fixtures.settings()
            .withRbd(new ProvisionerSettings.RbdDefaults(form, cephxSecret, clusterId, null, null)),
        Backoff.DEFAULT);
  }

  RbdProvisioningTest() {
    cinder.export(
        "rbd",
        Map.of(
            "name", "volumes/volume-1",
            "hosts", List.of("10.0.0.1", "10.0.0.2"),
            "ports", List.of("6789", "6789"),
            "auth_enabled", true,
            "auth_username", "cinder",
            "secret_type", "ceph",
            "access_mode", "rw"));
  }

  /** The admin's Secret, as {@code kubectl create secret generic --from-file=key} makes it. */
  static Secret adminSecret(Map<String, String> data) {
    Map<String, String> encoded = new java.util.LinkedHashMap<>();
    data.forEach(
        (k, v) ->
            encoded.put(
                k,
                v.startsWith("!raw:")
                    ? v.substring(5)
                    : Base64.getEncoder().encodeToString(v.getBytes(StandardCharsets.UTF_8))));
    return new SecretBuilder()
        .withNewMetadata()
        .withName("cephx")
        .withNamespace(NS)
        .addToLabels(RbdMapper.CEPHX_LABEL, "true")
        .endMetadata()
        .withData(encoded)
        .build();
  }

  private void adminSecretIs(Map<String, String> data) {
    secrets.secrets.put(NS + "/cephx", adminSecret(data));
  }

  private Secret shared() {
    return secrets.secrets.get(NS + "/" + SHARED);
  }

  // ------------------------------------------------------------------ success

  @Test
  void anRbdClaimBecomesAnInTreePvWithASharedCephxSecret() {
    adminSecretIs(Map.of("key", KEY + "\n"));
    PersistentVolume pv =
        UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of("fsType", "ext4")));
    assertThat(cinder.log())
        .containsExactly(
            FIND,
            CREATE,
            FIND,
            LIST,
            AWAIT,
            ATTACH,
            COMPLETE,
            "getSecret cephx",
            "putSecret " + SHARED);
    var rbd = pv.getSpec().getRbd();
    assertThat(rbd.getMonitors()).containsExactly("10.0.0.1:6789", "10.0.0.2:6789");
    assertThat(rbd.getPool()).isEqualTo("volumes");
    assertThat(rbd.getImage()).isEqualTo("volume-1");
    assertThat(rbd.getUser()).isEqualTo("cinder");
    assertThat(rbd.getFsType()).isEqualTo("ext4");
    assertThat(rbd.getSecretRef()).isEqualTo(new SecretReference(SHARED, NS));
    Secret s = shared();
    assertThat(s.getType()).isEqualTo("kubernetes.io/rbd");
    assertThat(s.getStringData()).as("trimmed").isEqualTo(Map.of("key", KEY));
    assertThat(s.getMetadata().getLabels())
        .isEqualTo(Names.sharedSecretLabels())
        .doesNotContainKey(Names.LABEL_PV);
  }

  @Test
  void aClassAsksForCephCsiVolumes() {
    adminSecretIs(Map.of("userKey", KEY, "userID", "k8s-nodes"));
    PersistentVolume pv =
        UntilMade.provision(
            provisioner,
            claim("1Gi"),
            storageClass(Map.of("rbdForm", "csi", "cephClusterID", "ceph-a")));
    var csi = pv.getSpec().getCsi();
    assertThat(pv.getSpec().getRbd()).isNull();
    assertThat(csi.getDriver()).isEqualTo("rbd.csi.ceph.com");
    assertThat(csi.getVolumeHandle()).isEqualTo("volume-1");
    assertThat(csi.getVolumeAttributes())
        .containsEntry("clusterID", "ceph-a")
        .containsEntry("pool", "volumes")
        .containsEntry("staticVolume", "true");
    assertThat(csi.getNodeStageSecretRef())
        .isEqualTo(new SecretReference("cephx-csi-k8s-nodes", NS));
    assertThat(secrets.secrets.get(NS + "/cephx-csi-k8s-nodes").getStringData())
        .isEqualTo(Map.of("userID", "k8s-nodes", "userKey", KEY));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "'in-tree rbd: refused, the export undone', rbd, ",
    "'ceph-csi: a ReadWriteMany block PV', csi, ceph-a"
  })
  void readWriteManyOnAMultiattachTypeNeedsCephCsi(String name, String form, String clusterId) {
    adminSecretIs(Map.of("key", KEY));
    cinder.multiattachTypes(true);
    var claim = claimOf(Fixtures.UID, "shared", "1Gi", "Block", "ReadWriteMany");
    Map<String, String> params =
        clusterId == null
            ? Map.of("rbdForm", form)
            : Map.of("rbdForm", form, "cephClusterID", clusterId);
    if (clusterId == null) {
      assertThatThrownBy(() -> UntilMade.provision(provisioner, claim, storageClass(params)))
          .isInstanceOfSatisfying(
              ProvisioningException.class, e -> assertThat(e.isFinal()).isTrue())
          .hasMessageContaining("ReadWriteMany on Ceph needs the csi form of RBD volumes");
      assertThat(cinder.log())
          .containsExactly(
              "getSecret cephx",
              FIND,
              CREATE,
              "getSecret cephx",
              FIND,
              LIST,
              AWAIT,
              ATTACH,
              COMPLETE,
              DETACH,
              DELETE);
      assertThat(cinder.volumes()).isEmpty();
      assertThat(shared()).isNull();
      return;
    }
    PersistentVolume pv = UntilMade.provision(provisioner, claim, storageClass(params));
    assertThat(pv.getSpec().getCsi().getReadOnly()).isFalse();
    assertThat(pv.getSpec().getCsi().getFsType()).isNull();
    assertThat(pv.getSpec().getAccessModes()).containsExactly("ReadWriteMany");
    assertThat(pv.getSpec().getVolumeMode()).isEqualTo("Block");
  }

  @Test
  void anIscsiClaimNeitherReadsNorMindsTheCephxSecret() {
    cinder.export("iscsi", FakeCinderClient.defaultExport());
    PersistentVolume pv = UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of()));
    assertThat(pv.getSpec().getIscsi()).isNotNull();
    assertThat(cinder.log())
        .as("no read of the admin's cephx Secret: only an RBD export needs it")
        .doesNotContain("getSecret cephx")
        .startsWith(FIND);
  }

  // ------------------------------------------------------------------ configuration problems

  static Arguments problem(String name, Consumer<RbdProvisioningTest> setup, String message) {
    return Arguments.of(name, setup, message);
  }

  static Stream<Arguments> cephxProblems() {
    return Stream.of(
        problem(
            "the Secret does not exist",
            t -> {},
            "the cephx Secret standalone-cinder/cephx does not exist: create it with the key of"
                + " the Ceph user Cinder names, e.g. kubectl -n standalone-cinder create secret"
                + " generic cephx --from-literal=key="),
        problem(
            "the Secret is not marked by the admin (a class may name any Secret of the namespace)",
            t -> {
              Secret s = t.adminSecret(Map.of("key", "AQ-the-webhook's-token-key"));
              s.getMetadata().setLabels(null);
              t.secrets.secrets.put(NS + "/cephx", s);
            },
            "the cephx Secret standalone-cinder/cephx is not marked as a cephx Secret: if it is"
                + " one, label it: kubectl -n standalone-cinder label secret cephx"
                + " standalone-cinder.io/cephx=true"),
        problem(
            "the Secret has no key",
            t -> t.adminSecretIs(Map.of("userID", "cinder")),
            "the cephx Secret standalone-cinder/cephx has no key: put the cephx key under 'key'"),
        problem(
            "the key is blank",
            t -> t.adminSecretIs(Map.of("key", " \n")),
            "standalone-cinder/cephx has no key"),
        problem(
            "the data is not base64",
            t -> t.adminSecretIs(Map.of("key", "!raw:not base64!")),
            "holds a value that is not base64"),
        problem(
            "the API server will not say",
            t ->
                t.secrets.failNextGet(
                    () -> new IllegalStateException("secrets \"cephx\" is forbidden")),
            "cannot read the cephx Secret standalone-cinder/cephx: secrets \"cephx\" is"
                + " forbidden"));
  }

  @ParameterizedTest(name = "class names Ceph, {0}: refused before any Cinder call")
  @MethodSource("cephxProblems")
  void aClassThatNamesCephIsRefusedBeforeAnyCinderCall(
      String name, Consumer<RbdProvisioningTest> setup, String message) {
    setup.accept(this);
    assertThatThrownBy(
            () ->
                UntilMade.provision(
                    provisioner, claim("1Gi"), storageClass(Map.of("rbdForm", "rbd"))))
        .isInstanceOfSatisfying(
            ProvisioningException.class,
            e -> assertThat(e.isFinal()).as("an admin can still fix it").isFalse())
        .hasMessageContaining(message)
        .hasMessageNotContaining(KEY);
    assertThat(cinder.log()).containsExactly("getSecret cephx");
    assertThat(cinder.volumes()).isEmpty();
  }

  @ParameterizedTest(name = "class silent on Ceph, {0}: undone once Cinder exports over RBD")
  @MethodSource("cephxProblems")
  void aClassSilentOnCephLearnsItFromTheExportAndUndoesIt(
      String name, Consumer<RbdProvisioningTest> setup, String message) {
    setup.accept(this);
    assertThatThrownBy(() -> UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of())))
        .isInstanceOfSatisfying(ProvisioningException.class, e -> assertThat(e.isFinal()).isFalse())
        .hasMessageContaining(message);
    assertThat(cinder.log())
        .containsExactly(
            FIND, CREATE, FIND, LIST, AWAIT, ATTACH, COMPLETE, "getSecret cephx", DETACH, DELETE);
    assertThat(cinder.volumes()).isEmpty();
    assertThat(cinder.attachments()).isEmpty();
    assertThat(shared()).isNull();
  }

  /**
   * The attack on the controller-manager: an in-tree rbd PV in a class that allows expansion would
   * let any user who may edit the claim hand it to Kubernetes' own expand controller (on 1.20 it
   * crashed the whole controller-manager). No such PV is made: a class that names Ceph is refused
   * before anything is asked; one silent on Ceph learns it from the export and undoes it. The csi
   * form is grown by ceph-csi, and is made.
   */
  @ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.CsvSource(
      delimiter = '|',
      value = {
        "class names in-tree rbd: refused before anything is asked | rbd | false",
        "class silent on Ceph, Cinder exports over RBD: undone | | false",
        "class names the csi form: made | csi | true",
      })
  void noInTreeRbdPvIsMadeInAClassThatAllowsExpansion(String name, String form, boolean made) {
    adminSecretIs(Map.of("key", KEY));
    var sc =
        storageClass(
            form == null
                ? Map.of()
                : form.equals("csi")
                    ? Map.of("rbdForm", "csi", "cephClusterID", "ceph-a")
                    : Map.of("rbdForm", form));
    sc.setAllowVolumeExpansion(true);
    if (made) {
      assertThat(UntilMade.provision(provisioner, claim("1Gi"), sc).getSpec().getCsi()).isNotNull();
      return;
    }
    assertThatThrownBy(() -> UntilMade.provision(provisioner, claim("1Gi"), sc))
        .isInstanceOfSatisfying(
            ProvisioningException.class,
            e -> assertThat(e.isFinal()).as("the class must change first").isTrue())
        .hasMessageContaining("allows volume expansion")
        .hasMessageContaining("rbdForm csi");
    assertThat(cinder.volumes()).as("nothing kept in Cinder").isEmpty();
    assertThat(cinder.attachments()).isEmpty();
    assertThat(shared()).isNull();
    if (form != null) {
      assertThat(cinder.log()).as("nothing asked").isEmpty();
    }
  }

  @Test
  void cephCsiWithoutAClusterIdIsRefusedBeforeAnyCinderCall() {
    adminSecretIs(Map.of("key", KEY));
    assertThatThrownBy(
            () ->
                UntilMade.provision(
                    provisioner, claim("1Gi"), storageClass(Map.of("rbdForm", "csi"))))
        .isInstanceOfSatisfying(ProvisioningException.class, e -> assertThat(e.isFinal()).isFalse())
        .hasMessageContaining(
            "names no cephClusterID, and the provisioner has no --ceph-cluster-id");
    assertThat(cinder.log()).containsExactly("getSecret cephx");
  }

  @Test
  void noCephxSecretConfiguredAtAllIsUndoneAndSaysWhatToConfigure() {
    provisioner = withDefaults(RbdForm.RBD, null, null);
    assertThatThrownBy(() -> UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of())))
        .isInstanceOfSatisfying(ProvisioningException.class, e -> assertThat(e.isFinal()).isFalse())
        .hasMessageContaining("name it with --cephx-secret (env CEPHX_SECRET)");
    assertThat(cinder.log())
        .containsExactly(FIND, CREATE, FIND, LIST, AWAIT, ATTACH, COMPLETE, DETACH, DELETE);
  }

  @Test
  void aSharedSecretThatCannotBeWrittenUndoesTheExportAndLeavesTheOtherSecretAlone() {
    adminSecretIs(Map.of("key", KEY));
    secrets.failNextPut(
        () -> new IllegalStateException("Secret standalone-cinder/cephx-rbd-cinder exists and"));
    assertThatThrownBy(() -> UntilMade.provision(provisioner, claim("1Gi"), storageClass(Map.of())))
        .isInstanceOf(ProvisioningException.class)
        .hasMessageContaining("exists and");
    assertThat(cinder.log())
        .containsExactly(
            FIND,
            CREATE,
            FIND,
            LIST,
            AWAIT,
            ATTACH,
            COMPLETE,
            "getSecret cephx",
            "putSecret " + SHARED,
            "getSecret " + SHARED,
            DETACH,
            DELETE);
    assertThat(secrets.secrets).containsOnlyKeys(NS + "/cephx");
  }

  // ------------------------------------------------------------------ the shared Secret's life

  private PersistentVolume provisionAndCreate(String uid, String name) {
    PersistentVolume pv =
        UntilMade.provision(provisioner, claimOf(uid, name, "1Gi", null), storageClass(Map.of()));
    secrets.created(pv);
    provisioner.handOver(pv);
    return pv;
  }

  private void release(PersistentVolume pv) {
    assertThat(UntilMade.release(provisioner, pv))
        .isEqualTo(org.standalonecinder.provisioner.controller.Provisioner.DeleteOutcome.DELETED);
    secrets.pvs.remove(pv.getMetadata().getName());
  }

  @Test
  void theSharedSecretGoesWithTheLastPvThatUsesItAndTheAdminsStays() {
    adminSecretIs(Map.of("key", KEY));
    PersistentVolume a = provisionAndCreate(Fixtures.UID, "a");
    PersistentVolume b = provisionAndCreate(UID_B, "b");
    assertThat(b.getSpec().getRbd().getSecretRef()).isEqualTo(a.getSpec().getRbd().getSecretRef());

    release(a);
    assertThat(shared()).as("b still uses it").isNotNull();
    release(b);
    assertThat(shared()).as("no PV uses it").isNull();
    assertThat(secrets.secrets).containsOnlyKeys(NS + "/cephx");
    // A second release (a retried delete) finds nothing to do.
    cinder.clearLog();
    provisioner.delete(b);
    assertThat(cinder.log())
        .doesNotContain("deleteSecret " + SHARED)
        .doesNotContain("deleteSecret cephx");
  }

  @Test
  void aProvisioningWhosePvIsNotCreatedYetKeepsTheSharedSecret() {
    adminSecretIs(Map.of("key", KEY));
    PersistentVolume a = provisionAndCreate(Fixtures.UID, "a");
    // b's Secret is written, its PV not created yet: a's release must not take the Secret.
    PersistentVolume b =
        UntilMade.provision(provisioner, claimOf(UID_B, "b", "1Gi", null), storageClass(Map.of()));
    release(a);
    assertThat(shared()).isNotNull();
    secrets.created(b);
    provisioner.handOver(b);
    release(b);
    assertThat(shared()).isNull();
  }

  @Test
  void aSecretOfTheSameNameThatIsNotOursIsNeverDeleted() {
    adminSecretIs(Map.of("key", KEY));
    PersistentVolume a = provisionAndCreate(Fixtures.UID, "a");
    secrets.secrets.put(
        NS + "/" + SHARED,
        new SecretBuilder()
            .withNewMetadata()
            .withName(SHARED)
            .withNamespace(NS)
            .endMetadata()
            .build());
    release(a);
    assertThat(shared()).isNotNull();
  }

  @Test
  void theSweepDeletesOnlyOurSharedSecretsThatNothingUses() {
    adminSecretIs(Map.of("key", KEY));
    provisionAndCreate(Fixtures.UID, "a");
    Secret leftover =
        new SecretBuilder(shared())
            .editMetadata()
            .withName("cephx-rbd-old-user")
            .endMetadata()
            .build();
    secrets.secrets.put(NS + "/cephx-rbd-old-user", leftover);
    // A provisioning in flight: its Secret is pending, its PV not created yet.
    provisioner = withDefaults(RbdForm.CSI, "cephx", "ceph-a");
    secrets.secrets.put(NS + "/cephx", adminSecret(Map.of("key", KEY)));
    var sweeping = provisioner;
    UntilMade.provision(sweeping, claimOf(UID_B, "b", "1Gi", null), storageClass(Map.of()));

    assertThat(sweeping.sweepSharedSecrets()).isEqualTo(1);
    assertThat(secrets.secrets)
        .containsOnlyKeys(NS + "/cephx", NS + "/" + SHARED, NS + "/cephx-csi-cinder");
  }
}
