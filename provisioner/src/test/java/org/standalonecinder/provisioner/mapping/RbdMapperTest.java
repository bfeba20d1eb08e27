package org.standalonecinder.provisioner.mapping;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.PersistentVolumeSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretReference;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.provisioner.cinder.ConnectionInfo;

/**
 * RBD exports as Cinder's RBDDriver sends them (the shape of the lab's recorded {@code
 * os-initialize_connection}), mapped to both PV forms; and every refusal with its message.
 */
class RbdMapperTest {

  static final String NS = "standalone-cinder";
  static final String KEY = "AQBa1Fxm7c3kHBAAyZ3J0c2VjcmV0LWtleS1mb3ItdGVzdA==";
  static final Map<String, String> SHARED =
      Map.of("standalone-cinder.io/shared-secret", "cephx", "app.kubernetes.io/managed-by", "x");
  static final Cephx CEPHX = Cephx.of(NS, "cephx", null, KEY);

  static RbdOptions opts(RbdForm form, String clusterId, Cephx cephx) {
    return new RbdOptions(form, clusterId, "rbd.csi.ceph.com", "layering", cephx);
  }

  static MappingContext ctx(RbdOptions o, String fsType, boolean block, boolean readOnly) {
    return new MappingContext(
        "pvc-1",
        "iqn.2026-11.org.x:k8s",
        fsType,
        block,
        readOnly,
        NS,
        Map.of("standalone-cinder.io/pv", "pvc-1"),
        SHARED,
        o,
        false);
  }

  static final MappingContext RBD = ctx(opts(RbdForm.RBD, null, CEPHX), "ext4", false, false);
  static final MappingContext CSI = ctx(opts(RbdForm.CSI, "ceph-a", CEPHX), "ext4", false, false);

  /** The data of transcripts/rbd/21-os-initialize_connection.json. */
  static Map<String, Object> lab(Object... overrides) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", "volumes/volume-7931222b-82c1-424c-a4c8-7feff4e1c893");
    m.put("hosts", List.of("127.0.0.1"));
    m.put("ports", List.of("6789"));
    m.put("cluster_name", "ceph");
    m.put("auth_enabled", true);
    m.put("auth_username", "cinder");
    m.put("secret_type", "ceph");
    m.put("secret_uuid", "457eb676-33da-42ec-9a8c-9293d545c337");
    m.put("volume_id", "7931222b-82c1-424c-a4c8-7feff4e1c893");
    m.put("discard", true);
    m.put("qos_specs", null);
    m.put("access_mode", "rw");
    m.put("encrypted", false);
    m.put("cacheable", false);
    for (int i = 0; i < overrides.length; i += 2) {
      m.put((String) overrides[i], overrides[i + 1]);
    }
    return m;
  }

  static MappedVolume map(Map<String, Object> data, MappingContext ctx) {
    return new RbdMapper().map(new ConnectionInfo("rbd", data), ctx);
  }

  static PersistentVolumeSpec spec(MappedVolume m) {
    PersistentVolumeSpec spec = new PersistentVolumeSpec();
    m.source().accept(spec);
    return spec;
  }

  // ------------------------------------------------------------------ in-tree spec.rbd

  static Stream<Arguments> inTree() {
    return Stream.of(
        Arguments.of(
            "the lab's export, cephx",
            lab(),
            RBD,
            List.of("127.0.0.1:6789"),
            "cinder",
            "cephx-rbd-cinder",
            "ext4",
            false),
        Arguments.of(
            "three monitors, one IPv6, ports as numbers",
            lab(
                "hosts",
                List.of("10.0.0.1", "10.0.0.2", "fd00::3"),
                "ports",
                List.of(6789, 3300, "6789")),
            RBD,
            List.of("10.0.0.1:6789", "10.0.0.2:3300", "[fd00::3]:6789"),
            "cinder",
            "cephx-rbd-cinder",
            "ext4",
            false),
        Arguments.of(
            "no ports: Ceph's default",
            lab("hosts", List.of("mon-a", "mon-b"), "ports", List.of()),
            RBD,
            List.of("mon-a:6789", "mon-b:6789"),
            "cinder",
            "cephx-rbd-cinder",
            "ext4",
            false),
        Arguments.of(
            "auth disabled: no Secret, no key needed",
            lab("auth_enabled", false),
            ctx(opts(RbdForm.RBD, null, Cephx.none(NS)), "ext4", false, false),
            List.of("127.0.0.1:6789"),
            "cinder",
            null,
            "ext4",
            false),
        Arguments.of(
            "auth_enabled as a string",
            lab("auth_enabled", "True"),
            RBD,
            List.of("127.0.0.1:6789"),
            "cinder",
            "cephx-rbd-cinder",
            "ext4",
            false),
        Arguments.of(
            "the admin's Secret names another user",
            lab(),
            ctx(
                opts(RbdForm.RBD, null, Cephx.of(NS, "cephx", "k8s-nodes", KEY)),
                "xfs",
                false,
                false),
            List.of("127.0.0.1:6789"),
            "k8s-nodes",
            "cephx-rbd-k8s-nodes",
            "xfs",
            false),
        Arguments.of(
            "block, read-only claim: no fsType, readOnly",
            lab(),
            ctx(opts(RbdForm.RBD, null, CEPHX), "ext4", true, true),
            List.of("127.0.0.1:6789"),
            "cinder",
            "cephx-rbd-cinder",
            null,
            true),
        Arguments.of(
            "Cinder exports read-only",
            lab("access_mode", "ro"),
            RBD,
            List.of("127.0.0.1:6789"),
            "cinder",
            "cephx-rbd-cinder",
            "ext4",
            true));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("inTree")
  void inTreeRbd(
      String name,
      Map<String, Object> data,
      MappingContext ctx,
      List<String> monitors,
      String user,
      String secretName,
      String fsType,
      boolean readOnly) {
    MappedVolume m = map(data, ctx);
    var rbd = spec(m).getRbd();
    assertThat(rbd.getMonitors()).isEqualTo(monitors);
    assertThat(rbd.getPool()).isEqualTo("volumes");
    assertThat(rbd.getImage()).isEqualTo("volume-7931222b-82c1-424c-a4c8-7feff4e1c893");
    assertThat(rbd.getUser()).isEqualTo(user);
    assertThat(rbd.getFsType()).isEqualTo(fsType);
    assertThat(rbd.getReadOnly()).isEqualTo(readOnly);
    assertThat(rbd.getKeyring()).as("never a node path").isNull();
    assertThat(m.sharedSecret()).isTrue();
    if (secretName == null) {
      assertThat(rbd.getSecretRef()).isNull();
      assertThat(m.secret()).isEmpty();
      return;
    }
    // Namespaced: the kubelet reads it from our namespace, nothing goes to the user's.
    assertThat(rbd.getSecretRef()).isEqualTo(new SecretReference(secretName, NS));
    Secret s = m.secret().orElseThrow();
    assertThat(s.getMetadata().getName()).isEqualTo(secretName);
    assertThat(s.getMetadata().getNamespace()).isEqualTo(NS);
    assertThat(s.getMetadata().getLabels()).isEqualTo(SHARED);
    assertThat(s.getType()).isEqualTo("kubernetes.io/rbd");
    assertThat(s.getStringData()).isEqualTo(Map.of("key", KEY));
  }

  // ------------------------------------------------------------------ ceph-csi spec.csi

  static Stream<Arguments> csi() {
    return Stream.of(
        Arguments.of("the lab's export", lab(), CSI, "cinder", "cephx-csi-cinder", "ext4", false),
        Arguments.of(
            "auth disabled: ceph-csi still needs a user and key",
            lab("auth_enabled", false),
            CSI,
            "cinder",
            "cephx-csi-cinder",
            "ext4",
            false),
        Arguments.of(
            "block, read-only",
            lab(),
            ctx(opts(RbdForm.CSI, "ceph-a", CEPHX), "ext4", true, true),
            "cinder",
            "cephx-csi-cinder",
            null,
            true),
        Arguments.of(
            "block, ReadWriteMany (ceph-csi maps it on several nodes)",
            lab(),
            ctx(opts(RbdForm.CSI, "ceph-a", CEPHX), "ext4", true, false).withMultiNode(true),
            "cinder",
            "cephx-csi-cinder",
            null,
            false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("csi")
  void staticCephCsi(
      String name,
      Map<String, Object> data,
      MappingContext ctx,
      String user,
      String secretName,
      String fsType,
      boolean readOnly) {
    MappedVolume m = map(data, ctx);
    var csi = spec(m).getCsi();
    assertThat(csi.getDriver()).isEqualTo("rbd.csi.ceph.com");
    assertThat(csi.getVolumeHandle()).isEqualTo("volume-7931222b-82c1-424c-a4c8-7feff4e1c893");
    assertThat(csi.getVolumeAttributes())
        .containsExactly(
            Map.entry("clusterID", "ceph-a"),
            Map.entry("pool", "volumes"),
            Map.entry("staticVolume", "true"),
            Map.entry("imageFeatures", "layering"));
    assertThat(csi.getFsType()).isEqualTo(fsType);
    assertThat(csi.getReadOnly()).isEqualTo(readOnly);
    assertThat(csi.getNodeStageSecretRef()).isEqualTo(new SecretReference(secretName, NS));
    Secret s = m.secret().orElseThrow();
    assertThat(s.getType()).isEqualTo("Opaque");
    assertThat(s.getStringData()).isEqualTo(Map.of("userID", user, "userKey", KEY));
    assertThat(s.getMetadata().getLabels()).isEqualTo(SHARED);
    assertThat(SecretRefs.of(spec(m))).containsExactly(new SecretReference(secretName, NS));
  }

  // ------------------------------------------------------------------ refusals

  static Stream<Arguments> refusals() {
    return Stream.of(
        Arguments.of(
            "no name, no hosts",
            lab("name", null, "hosts", List.of()),
            RBD,
            false,
            "Cinder's RBD connection info lacks name, hosts"),
        Arguments.of(
            "a name that is not pool/image",
            lab("name", "volume-1"),
            RBD,
            false,
            "names image 'volume-1', not pool/image"),
        Arguments.of(
            "pool/namespace/image",
            lab("name", "volumes/ns/volume-1"),
            RBD,
            false,
            "names image 'volumes/ns/volume-1', not pool/image"),
        Arguments.of(
            "ports that do not match the hosts",
            lab("hosts", List.of("a", "b"), "ports", List.of("6789")),
            RBD,
            false,
            "names 2 monitor hosts but 1 ports"),
        Arguments.of(
            "a port that is no port",
            lab("ports", List.of("67890")),
            RBD,
            false,
            "monitor port '67890', not a port number"),
        Arguments.of(
            "encrypted", lab("encrypted", true), RBD, false, "cannot open Cinder's LUKS volumes"),
        // A hostile or broken Cinder: /dev/rbd/<pool>/<image> must stay under /dev/rbd.
        Arguments.of(
            "an image that climbs out of /dev/rbd",
            lab("name", "../sda"),
            RBD,
            false,
            "names Ceph pool '..', which is not a Ceph name"),
        Arguments.of(
            "an image that is an option",
            lab("name", "volumes/--pool=other"),
            RBD,
            false,
            "names RBD image '--pool=other', which is not a Ceph name"),
        Arguments.of(
            "a user that is an option",
            lab("auth_username", "admin --keyring=/etc/shadow"),
            RBD,
            false,
            "names Ceph user 'admin --keyring=/etc/shadow'"),
        Arguments.of(
            "a monitor that is no host",
            lab("hosts", List.of("mon1;reboot")),
            RBD,
            false,
            "names Ceph monitor host 'mon1;reboot'"),
        Arguments.of(
            "the form unknown (no version, nothing configured)",
            lab(),
            ctx(opts(null, null, CEPHX), "ext4", false, false),
            true,
            "set --rbd-form (env RBD_FORM) or the class parameter rbdForm"),
        Arguments.of(
            "cephx, and no Secret configured",
            lab(),
            ctx(opts(RbdForm.RBD, null, Cephx.none(NS)), "ext4", false, false),
            true,
            "Ceph requires cephx for user 'cinder', and Cinder never sends the key: create a"
                + " Secret with it in namespace standalone-cinder and name it with --cephx-secret"),
        Arguments.of(
            "csi, auth disabled, and no Secret configured",
            lab("auth_enabled", false),
            ctx(opts(RbdForm.CSI, "ceph-a", Cephx.none(NS)), "ext4", false, false),
            true,
            "ceph-csi needs a Ceph user and key"),
        Arguments.of(
            "the admin's Secret is missing",
            lab(),
            ctx(
                opts(RbdForm.RBD, null, Cephx.unusable(NS, "cephx", "the cephx Secret is gone")),
                "ext4",
                false,
                false),
            true,
            "the cephx Secret is gone"),
        Arguments.of(
            "cephx and no user anywhere",
            lab("auth_username", null),
            RBD,
            false,
            "names no auth_username, and the cephx Secret cephx names no userID"),
        Arguments.of(
            "csi without a clusterID",
            lab(),
            ctx(opts(RbdForm.CSI, null, CEPHX), "ext4", false, false),
            true,
            "needs ceph-csi's clusterID for this Ceph cluster (monitors 127.0.0.1:6789)"),
        Arguments.of(
            "ReadWriteMany in the in-tree form",
            lab(),
            ctx(opts(RbdForm.RBD, null, CEPHX), "ext4", true, false).withMultiNode(true),
            false,
            "ReadWriteMany on Ceph needs the csi form of RBD volumes (rbdForm csi"),
        Arguments.of(
            "the attack on the controller-manager: in-tree, in a class that allows expansion",
            lab(),
            ctx(opts(RbdForm.RBD, null, CEPHX).inGrowableClass("fast"), "ext4", false, false),
            false,
            "StorageClass fast allows volume expansion: an in-tree rbd PV there could be grown"));
  }

  /** The csi form is grown by ceph-csi's resizer, never by Kubernetes' in-tree expand plugin. */
  @org.junit.jupiter.api.Test
  void theCsiFormIsMadeInAClassThatAllowsExpansion() {
    MappingContext growable =
        ctx(opts(RbdForm.CSI, "ceph-a", CEPHX).inGrowableClass("fast"), "ext4", false, false);
    var spec = new io.fabric8.kubernetes.api.model.PersistentVolumeSpec();
    map(lab(), growable).source().accept(spec);
    assertThat(spec.getCsi()).isNotNull();
    assertThat(spec.getRbd()).isNull();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("refusals")
  void refusals(
      String name,
      Map<String, Object> data,
      MappingContext ctx,
      boolean awaitsConfiguration,
      String message) {
    assertThatThrownBy(() -> map(data, ctx))
        .isInstanceOfSatisfying(
            UnmappableExportException.class,
            e -> assertThat(e.awaitsConfiguration()).isEqualTo(awaitsConfiguration))
        .hasMessageContaining(message)
        .hasMessageNotContaining(KEY);
  }

  // ------------------------------------------------------------------ shared Secret names

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "plain user,        RBD, cinder,      cephx-rbd-cinder",
    "csi form,          CSI, cinder,      cephx-csi-cinder",
    "dotted user,       RBD, cinder.prod, cephx-rbd-cinder.prod",
    "dashed user,       RBD, cinder-prod, cephx-rbd-cinder-prod",
    "upper case user,   RBD, Cinder_Prod, (hashed)",
    "underscore user,   RBD, cinder_prod, (hashed)",
    "user ending in a dot, CSI, cinder.,  (hashed)"
  })
  void sharedSecretNamesAreValidAndKeptApart(
      String name, RbdForm form, String user, String expected) {
    String got = RbdMapper.sharedSecretName(form, "cephx", user);
    if (expected.equals("(hashed)")) {
      assertThat(got)
          .matches("cephx-" + form.spelling() + "-[0-9a-f]{12}")
          .isNotEqualTo(RbdMapper.sharedSecretName(form, "cephx", user + "x"));
    } else {
      assertThat(got).isEqualTo(expected);
    }
    assertThat(got).hasSizeLessThanOrEqualTo(253).matches("[a-z0-9]([-a-z0-9.]*[a-z0-9])?");
  }

  @org.junit.jupiter.api.Test
  void aLongAdminSecretNameStillGivesAValidName() {
    String admin = "a".repeat(250);
    String got = RbdMapper.sharedSecretName(RbdForm.CSI, admin, "cinder");
    // Too long to keep whole: the admin's name cut to 230, the form, a hash of the whole.
    assertThat(got).matches("a{230}-csi-[0-9a-f]{12}");
    assertThat(org.standalonecinder.api.ClassParameters.isDnsSubdomain(got)).isTrue();
  }

  @org.junit.jupiter.api.Test
  void theKeyNeverShowsInCephxToString() {
    assertThat(CEPHX.toString()).doesNotContain(KEY).contains("key=***");
  }
}
