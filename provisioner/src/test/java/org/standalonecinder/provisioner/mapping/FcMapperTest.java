package org.standalonecinder.provisioner.mapping;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.PersistentVolumeSpec;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.provisioner.cinder.ConnectionInfo;
import org.standalonecinder.provisioner.cinder.Connector;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;

/**
 * Fibre Channel exports as Cinder's FC drivers send them (os-brick's {@code fibre_channel}
 * connection properties): one WWN or a list, with or without an initiator-target map.
 */
class FcMapperTest {

  static final MappingContext FS =
      new MappingContext(
          "pvc-1", "iqn.2026-11.org.x:k8s", "xfs", false, false, "standalone-cinder", Map.of());
  static final MappingContext BLOCK_RO =
      new MappingContext(
          "pvc-1", "iqn.2026-11.org.x:k8s", "xfs", true, true, "standalone-cinder", Map.of());

  static Map<String, Object> data(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }

  static Stream<Arguments> exports() {
    return Stream.of(
        Arguments.of(
            "one WWN as a string",
            data("target_wwn", "500a0981891b8dc5", "target_lun", 1, "target_discovered", false),
            FS,
            List.of("500a0981891b8dc5"),
            1,
            "xfs",
            false),
        Arguments.of(
            "a list of WWNs, upper case with colons",
            data(
                "target_wwn",
                List.of("50:0A:09:81:89:1B:8D:C5", "500a0981991b8dc5"),
                "target_lun",
                3),
            FS,
            List.of("500a0981891b8dc5", "500a0981991b8dc5"),
            3,
            "xfs",
            false),
        Arguments.of(
            "the initiator-target map adds its targets once",
            data(
                "target_wwn",
                List.of("500a0981891b8dc5"),
                "target_lun",
                "2",
                "initiator_target_map",
                Map.of(
                    "10000000c9a1b2c3",
                    List.of("500a0981891b8dc5", "0x500a0982891b8dc5"),
                    "10000000c9a1b2c4",
                    List.of("500a0982891b8dc5"))),
            FS,
            List.of("500a0981891b8dc5", "500a0982891b8dc5"),
            2,
            "xfs",
            false),
        Arguments.of(
            "targets from the map only",
            data(
                "target_lun",
                0,
                "initiator_target_map",
                Map.of("10000000c9a1b2c3", List.of("500a0981891b8dc5"))),
            FS,
            List.of("500a0981891b8dc5"),
            0,
            "xfs",
            false),
        Arguments.of(
            "Block and ReadOnlyMany: no filesystem, read-only",
            data("target_wwn", "500a0981891b8dc5", "target_lun", 1),
            BLOCK_RO,
            List.of("500a0981891b8dc5"),
            1,
            null,
            true));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("exports")
  void mapsToSpecFc(
      String name,
      Map<String, Object> data,
      MappingContext ctx,
      List<String> wwns,
      int lun,
      String fsType,
      boolean readOnly) {
    MappedVolume mapped =
        VolumeMappers.standard().map(new ConnectionInfo("fibre_channel", data), ctx);
    PersistentVolumeSpec spec = new PersistentVolumeSpec();
    mapped.source().accept(spec);
    assertThat(spec.getFc().getTargetWWNs()).containsExactlyElementsOf(wwns);
    assertThat(spec.getFc().getLun()).isEqualTo(lun);
    assertThat(spec.getFc().getFsType()).isEqualTo(fsType);
    assertThat(spec.getFc().getReadOnly()).isEqualTo(readOnly);
    assertThat(spec.getIscsi()).isNull();
    assertThat(mapped.secret()).as("FC has no authentication of its own").isEmpty();
  }

  static Stream<Arguments> refused() {
    return Stream.of(
        Arguments.of(
            "no target at all",
            data("target_lun", 1),
            "lacks target_wwn (or initiator_target_map)"),
        Arguments.of("no LUN", data("target_wwn", "500a0981891b8dc5"), "lacks target_lun"),
        Arguments.of(
            "nothing exported (no WWPNs in the connector?)",
            data(),
            "lacks target_wwn (or initiator_target_map), target_lun: the backend's driver did not"
                + " export the volume to this cluster's WWPNs"),
        Arguments.of(
            "a target that is no WWN",
            data(
                "target_wwn",
                List.of("500a0981891b8dc5", "iqn.2010-10.org.openstack:x"),
                "target_lun",
                1),
            "names targets that are not WWNs (16 hex digits): [iqn.2010-10.org.openstack:x]"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("refused")
  void refuses(String name, Map<String, Object> data, String message) {
    assertThatThrownBy(
            () -> VolumeMappers.standard().map(new ConnectionInfo("fibre_channel", data), FS))
        .isInstanceOf(UnmappableExportException.class)
        .hasMessageContaining(message);
  }

  @ParameterizedTest(name = "connector with {0}")
  @MethodSource("connectors")
  void theConnectorCarriesTheConfiguredNames(
      String name, List<String> wwpns, List<String> wwnns, Map<String, Object> expected) {
    ProvisionerSettings s =
        new ProvisionerSettings(
                ProvisionerSettings.DEFAULT_NAME,
                "c",
                "c",
                "iqn.2026-11.org.x:k8s",
                "h",
                "10.0.0.1",
                "ns",
                false)
            .withFibreChannel(wwpns, wwnns);
    Map<String, Object> api =
        new Connector(
                s.initiatorName(), s.connectorHost(), s.connectorIp(), false, s.wwpns(), s.wwnns())
            .toApi();
    expected.forEach((k, v) -> assertThat(api).containsEntry(k, v));
    if (expected.isEmpty()) {
      assertThat(api).doesNotContainKeys("wwpns", "wwnns");
    }
  }

  static Stream<Arguments> connectors() {
    return Stream.of(
        Arguments.of("no FC", List.of(), List.of(), Map.of()),
        Arguments.of(
            "WWPNs with colons, normalised",
            List.of("10:00:00:00:C9:A1:B2:C3", "0x10000000c9a1b2c4"),
            List.of("20000000c9a1b2c3"),
            Map.of(
                "wwpns",
                List.of("10000000c9a1b2c3", "10000000c9a1b2c4"),
                "wwnns",
                List.of("20000000c9a1b2c3"))));
  }
}
