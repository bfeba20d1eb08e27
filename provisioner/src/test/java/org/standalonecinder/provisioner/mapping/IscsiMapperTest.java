package org.standalonecinder.provisioner.mapping;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ISCSIPersistentVolumeSource;
import io.fabric8.kubernetes.api.model.PersistentVolumeSpec;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.provisioner.cinder.ConnectionInfo;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;

/** Cinder's iSCSI connection_info to spec.iscsi and its CHAP Secret, one row a case. */
class IscsiMapperTest {

  private static final MappingContext FS =
      new MappingContext(
          "pvc-1", "iqn.2026-11.org.x:k8s", "ext4", false, false, "sc-ns", Map.of("l", "v"));

  private static Map<String, Object> export(Object... kv) {
    Map<String, Object> d = new HashMap<>(FakeCinderClient.defaultExport());
    for (int i = 0; i < kv.length; i += 2) {
      if (kv[i + 1] == null) {
        d.remove((String) kv[i]);
      } else {
        d.put((String) kv[i], kv[i + 1]);
      }
    }
    return d;
  }

  static Arguments ok(
      String name, Map<String, Object> data, MappingContext ctx, Consumer<MappedVolume> check) {
    return Arguments.of(name, data, ctx, check);
  }

  private static ISCSIPersistentVolumeSource iscsi(MappedVolume m) {
    PersistentVolumeSpec spec = new PersistentVolumeSpec();
    m.source().accept(spec);
    return spec.getIscsi();
  }

  static Stream<Arguments> mapped() {
    return Stream.of(
        ok(
            "the local Cinder's export",
            export(),
            FS,
            m -> {
              var s = iscsi(m);
              assertThat(s.getTargetPortal()).isEqualTo("127.0.0.1:3260");
              assertThat(s.getLun()).isEqualTo(1);
              assertThat(s.getInitiatorName()).isEqualTo("iqn.2026-11.org.x:k8s");
              assertThat(s.getFsType()).isEqualTo("ext4");
              assertThat(s.getReadOnly()).isFalse();
              assertThat(s.getChapAuthSession()).isTrue();
              assertThat(s.getChapAuthDiscovery()).isFalse();
              assertThat(s.getSecretRef().getName()).isEqualTo("chap-pvc-1");
              assertThat(s.getSecretRef().getNamespace()).isEqualTo("sc-ns");
              assertThat(s.getPortals()).isEmpty();
              var secret = m.secret().orElseThrow();
              assertThat(secret.getType()).isEqualTo("kubernetes.io/iscsi-chap");
              assertThat(secret.getStringData())
                  .containsOnlyKeys("node.session.auth.username", "node.session.auth.password");
              assertThat(secret.getMetadata().getLabels()).containsEntry("l", "v");
            }),
        ok(
            "no CHAP where the admin allows it: no Secret",
            export("auth_method", null, "auth_username", null, "auth_password", null),
            FS.withChapOptional(true),
            m -> {
              assertThat(m.secret()).isEmpty();
              assertThat(iscsi(m).getSecretRef()).isNull();
              assertThat(iscsi(m).getChapAuthSession()).isFalse();
            }),
        ok(
            "discovery CHAP too",
            export(
                "discovery_auth_method", "CHAP",
                "discovery_auth_username", "du",
                "discovery_auth_password", "dp"),
            FS,
            m -> {
              assertThat(iscsi(m).getChapAuthDiscovery()).isTrue();
              assertThat(m.secret().orElseThrow().getStringData())
                  .containsEntry("discovery.sendtargets.auth.username", "du")
                  .containsEntry("discovery.sendtargets.auth.password", "dp");
            }),
        ok(
            "LUN as a string",
            export("target_lun", "3"),
            FS,
            m -> assertThat(iscsi(m).getLun()).isEqualTo(3)),
        ok(
            "multipath: the other portals of the same IQN and LUN",
            export(
                "target_portals", List.of("127.0.0.1:3260", "10.0.0.2:3260", "10.0.0.3:3260"),
                "target_iqns",
                    List.of(
                        "iqn.2010-10.org.openstack:volume-x",
                        "iqn.2010-10.org.openstack:volume-x",
                        "iqn.other"),
                "target_luns", List.of(1, 1, 1)),
            FS,
            m -> assertThat(iscsi(m).getPortals()).containsExactly("10.0.0.2:3260")),
        ok(
            "read-only export",
            export("access_mode", "ro"),
            FS,
            m -> assertThat(iscsi(m).getReadOnly()).isTrue()),
        ok(
            "ReadOnlyMany claim",
            export(),
            new MappingContext(
                "pvc-1", "iqn.2026-11.org.x:k8s", "ext4", false, true, "ns", Map.of()),
            m -> assertThat(iscsi(m).getReadOnly()).isTrue()),
        ok(
            "block mode has no fsType",
            export(),
            new MappingContext(
                "pvc-1", "iqn.2026-11.org.x:k8s", "ext4", true, false, "ns", Map.of()),
            m -> assertThat(iscsi(m).getFsType()).isNull()),
        ok(
            "ReadWriteMany block: every node logs in as the cluster's one initiator, read-write",
            export(),
            new MappingContext(
                    "pvc-1", "iqn.2026-11.org.x:k8s", "ext4", true, false, "ns", Map.of())
                .withMultiNode(true),
            m -> {
              assertThat(iscsi(m).getInitiatorName()).isEqualTo("iqn.2026-11.org.x:k8s");
              assertThat(iscsi(m).getReadOnly()).isFalse();
              assertThat(iscsi(m).getFsType()).isNull();
            }));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("mapped")
  void maps(
      String name, Map<String, Object> data, MappingContext ctx, Consumer<MappedVolume> check) {
    check.accept(VolumeMappers.standard().map(new ConnectionInfo("iscsi", data), ctx));
  }

  static Stream<Arguments> refused() {
    return Stream.of(
        Arguments.of(
            "the fake driver's export",
            "iscsi",
            Map.of("access_mode", "rw"),
            "lacks target_portal, target_iqn, target_lun"),
        Arguments.of("no LUN", "iscsi", export("target_lun", null), "lacks target_lun"),
        Arguments.of("LUN not a number", "iscsi", export("target_lun", "one"), "lacks target_lun"),
        Arguments.of(
            "CHAP without password", "iscsi", export("auth_password", null), "CHAP but sent no"),
        Arguments.of("encrypted", "iscsi", export("encrypted", true), "encrypted"),
        // Any pod that reaches the portal could log in to an export without CHAP.
        Arguments.of(
            "no CHAP, and the admin did not allow it",
            "iscsi",
            export("auth_method", null, "auth_username", null, "auth_password", null),
            "Cinder exported the volume over iSCSI without CHAP (auth_method absent): any pod that"
                + " reaches 127.0.0.1:3260 could read and write it, so it was refused and undone."),
        Arguments.of(
            "CHAP named something else",
            "iscsi",
            export("auth_method", "None"),
            "without CHAP (auth_method None)"),
        // A hostile or broken Cinder: nothing a node or the attach command could read two ways.
        Arguments.of(
            "an IQN that is an option",
            "iscsi",
            export("target_iqn", "-o delete"),
            "names iSCSI target '-o delete', which is not an iqn., eui. or naa. name"),
        Arguments.of(
            "an IQN with a path in it",
            "iscsi",
            export("target_iqn", "iqn.2010-10.org.openstack:../../dev/sda"),
            "which is not an iqn., eui. or naa. name"),
        Arguments.of(
            "a portal that is no host:port",
            "iscsi",
            export("target_portal", "127.0.0.1:3260 --op delete"),
            "names iSCSI portal '127.0.0.1:3260 --op delete', which is not host:port"),
        Arguments.of(
            "a portal of another multipath target that is no host:port",
            "iscsi",
            export("target_portals", List.of("127.0.0.1:3260", "$(reboot):3260")),
            "names iSCSI portal '$(reboot):3260'"),
        Arguments.of(
            "a LUN out of range", "iscsi", export("target_lun", -1), "names iSCSI LUN '-1'"),
        Arguments.of(
            "unknown protocol", "nvmeof", Map.of(), "'nvmeof', which this provisioner cannot"),
        Arguments.of("no protocol", null, Map.of(), "'null'"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("refused")
  void refuses(String name, String type, Map<String, Object> data, String message) {
    assertThatThrownBy(() -> VolumeMappers.standard().map(new ConnectionInfo(type, data), FS))
        .isInstanceOf(UnmappableExportException.class)
        .hasMessageContaining(message);
  }
}
