package org.standalonecinder.provisioner.provision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.TopologySelectorTermBuilder;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.provision.Placement.Topology;

/**
 * Where a volume goes, one row per way of asking: the class's {@code availability}, its {@code
 * allowedTopologies}, the selected node's zone, a clone's source, and {@code ignore-volume-az}; and
 * every disagreement between them refused with what to change.
 */
class PlacementTest {

  private static final String ZONE = Placement.DEFAULT_ZONE_LABEL;

  /**
   * Columns: availability, allowed zones (space-separated), the selected node's zone ("-" for a
   * node without the label, empty for no node), the source's zone, ignore-volume-az; then the
   * Cinder zone, the PV's node zone (empty for none), or the refusal's words.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      textBlock =
          """
          nothing asked: Cinder's default, any node          |      |           |      |      | false | |
          availability only: Cinder's zone, any node          | az-1 |           |      |      | false | az-1 |
          the node's zone: the volume and the PV there        |      |           | az-2 |      | false | az-2 | az-2
          a node without a zone label: any node               |      |           | -    |      | false | |
          the node's zone within the allowed ones             |      | az-1 az-2 | az-2 |      | false | az-2 | az-2
          the node's zone outside the allowed ones: refused   |      | az-1      | az-2 |      | false | refused: which StorageClass cinder does not allow |
          availability and the node's zone agree              | az-2 |           | az-2 |      | false | az-2 | az-2
          availability and the node's zone differ: refused    | az-1 |           | az-2 |      | false | refused: drop availability from the class |
          immediate, one allowed zone                         |      | az-3      |      |      | false | az-3 | az-3
          immediate, availability among the allowed           | az-2 | az-1 az-2 |      |      | false | az-2 | az-2
          immediate, availability not allowed: refused        | az-9 | az-1      |      |      | false | refused: asks for availability az-9 |
          a clone: in its source's zone                       |      |           |      | az-4 | false | az-4 |
          a clone on a node of its source's zone              |      |           | az-4 | az-4 | false | az-4 | az-4
          a clone on a node of another zone: refused          |      |           | az-5 | az-4 | false | refused: a clone stays in its source's zone |
          a clone, immediate: the source's zone if allowed    |      | az-1 az-4 |      | az-4 | false | az-4 | az-4
          a clone, immediate, source's zone not allowed       |      | az-1      |      | az-4 | false | refused: a clone stays in its source's zone |
          ignore-volume-az: the node's zone for the PV only   |      |           | az-2 |      | true  | | az-2
          ignore-volume-az: availability not sent to Cinder   | az-1 |           |      |      | true  | |
          ignore-volume-az: a clone on any node's zone        |      |           | az-5 | az-4 | true  | | az-5
          """)
  void theVolumeGoesWhereTheClassTheNodeAndTheSourceAgree(
      String name,
      String availability,
      String allowed,
      String nodeZone,
      String sourceZone,
      boolean ignoreVolumeAz,
      String cinderZone,
      String pvZone) {
    StorageClass sc =
        classAllowing(allowed == null ? List.of() : Arrays.asList(allowed.split(" ")));
    String node = nodeZone == null ? null : "node-1";
    Map<String, String> labels =
        nodeZone == null || nodeZone.equals("-") ? Map.of() : Map.of(ZONE, nodeZone);
    Topology topology = new Topology(ZONE, ignoreVolumeAz);
    if (cinderZone != null && cinderZone.startsWith("refused: ")) {
      assertThatThrownBy(
              () ->
                  Placement.decide(
                      sc, availability, node, labels, Fixtures.UID, sourceZone, topology))
          .isInstanceOfSatisfying(
              ProvisioningException.class, e -> assertThat(e.isFinal()).isTrue())
          .hasMessageContaining(cinderZone.substring("refused: ".length()));
      return;
    }
    Placement p =
        Placement.decide(sc, availability, node, labels, Fixtures.UID, sourceZone, topology);
    assertThat(p.cinderZone()).isEqualTo(cinderZone);
    assertThat(p.nodeZone()).isEqualTo(pvZone);
  }

  /** Where the zone came from, as events say it: never a label that is not there. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          the node's label             |      | az-2 |      | selected node node-1 (topology.kubernetes.io/zone=az-2)
          an unlabelled node, a class  | az-1 | -    |      | StorageClass cinder availability (the selected node node-1 has no topology.kubernetes.io/zone label)
          an unlabelled node, a clone  |      | -    | az-4 | the clone source's zone (the selected node node-1 has no topology.kubernetes.io/zone label)
          no node, a class             | az-1 |      |      | StorageClass cinder availability
          """)
  void theEventSaysWhereTheZoneCameFrom(
      String name, String availability, String nodeZone, String sourceZone, String from) {
    StorageClass sc = classAllowing(List.of());
    String node = nodeZone == null ? null : "node-1";
    Map<String, String> labels =
        nodeZone == null || nodeZone.equals("-") ? Map.of() : Map.of(ZONE, nodeZone);

    Placement p =
        Placement.decide(
            sc, availability, node, labels, Fixtures.UID, sourceZone, new Topology(ZONE, false));

    assertThat(p.from()).isEqualTo(from);
  }

  /** Claims of an immediate class are spread over its allowed zones, each always to the same. */
  @ParameterizedTest(name = "{0} allowed zones")
  @CsvSource({"2", "3"})
  void immediateClaimsAreSpreadOverTheAllowedZones(int zones) {
    List<String> allowed = IntStream.range(0, zones).mapToObj(i -> "az-" + i).toList();
    StorageClass sc = classAllowing(allowed);
    List<String> chosen =
        IntStream.range(0, 200)
            .mapToObj(i -> decide(sc, "uid-" + i).nodeZone())
            .distinct()
            .sorted()
            .toList();
    assertThat(chosen).containsExactlyElementsOf(allowed);
    assertThat(decide(sc, "uid-7")).isEqualTo(decide(sc, "uid-7"));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "another key restricted: refused, topology.cinder.csi.openstack.org/zone, restricts"
        + " topology.cinder.csi.openstack.org/zone",
  })
  void allowedTopologiesOfAnotherLabelAreRefused(String name, String key, String words) {
    StorageClass sc = Fixtures.storageClass(Map.of());
    sc.setAllowedTopologies(
        List.of(
            new TopologySelectorTermBuilder()
                .addNewMatchLabelExpression()
                .withKey(key)
                .withValues("az-1")
                .endMatchLabelExpression()
                .build()));
    assertThatThrownBy(() -> decide(sc, Fixtures.UID))
        .isInstanceOf(ProvisioningException.class)
        .hasMessageContaining(words);
  }

  @ParameterizedTest(name = "''{0}''")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          topology.kubernetes.io/zone         | true
          failure-domain.beta.kubernetes.io/zone | true
          zone                                | true
          ''                                  | false
          Topology.Kubernetes.io/zone         | false
          topology.kubernetes.io/             | false
          a/b/c                               | false
          """)
  void theZoneLabelMustBeALabelKey(String key, boolean valid) {
    if (valid) {
      assertThat(new Topology(key, false).zoneLabel()).isEqualTo(key);
    } else {
      assertThatThrownBy(() -> new Topology(key, false))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("is not a label key");
    }
  }

  /**
   * A volume made at an earlier look, taken once its export ends: in the zone the claim needs now,
   * or refused (undone and made again) when the scheduler chose a node elsewhere meanwhile.
   */
  @ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.CsvSource({
    "the zone asked for, zone-a, zone-a, true",
    "no zone asked for, , zone-b, true",
    "another zone now, zone-b, zone-a, false"
  })
  void aVolumeMadeEarlierIsTakenOnlyInTheZoneNeededNow(
      String name, String needed, String volumeZone, boolean taken) {
    Placement now = new Placement(needed, needed, "the selected node's zone");
    var volume =
        new org.standalonecinder.provisioner.cinder.Volume(
            "vol-1",
            "pv",
            "in-use",
            1,
            volumeZone,
            null,
            null,
            null,
            null,
            false,
            null,
            null,
            null);
    if (taken) {
      now.requireZoneOf(volume);
    } else {
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> now.requireZoneOf(volume))
          .isInstanceOfSatisfying(
              org.standalonecinder.provisioner.controller.ProvisioningException.class,
              e -> assertThat(e.isFinal()).isFalse())
          .hasMessage(
              "volume vol-1 of this claim is in zone zone-a and the claim now needs zone zone-b"
                  + " (the selected node's zone); it is deleted and a new one is made");
    }
  }

  private static Placement decide(StorageClass sc, String uid) {
    return Placement.decide(sc, null, null, Map.of(), uid, null, Topology.DEFAULT);
  }

  private static StorageClass classAllowing(List<String> zones) {
    StorageClass sc = Fixtures.storageClass(Map.of());
    if (!zones.isEmpty()) {
      sc.setAllowedTopologies(
          List.of(
              new TopologySelectorTermBuilder()
                  .addNewMatchLabelExpression()
                  .withKey(ZONE)
                  .withValues(zones)
                  .endMatchLabelExpression()
                  .build()));
    }
    return sc;
  }
}
