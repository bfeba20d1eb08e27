package org.standalonecinder.provisioner.mapping;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolumeSpec;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.standalonecinder.provisioner.cinder.ConnectionInfo;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;

/** The target both the PV and the host's own login are made from. */
class IscsiTargetTest {

  private final ConnectionInfo chapExport =
      new ConnectionInfo("iscsi", FakeCinderClient.defaultExport());

  @Test
  void thePvAndTheHostGetTheSameTarget() {
    MappedVolume pv =
        new IscsiMapper()
            .map(
                chapExport,
                new MappingContext(
                    "pvc-1", "iqn.2026-11.org.x:k8s", null, true, false, "ns", Map.of()));
    PersistentVolumeSpec spec = new PersistentVolumeSpec();
    pv.source().accept(spec);
    IscsiTarget target = IscsiTarget.of(chapExport);
    var host = target.source("iqn.2026-11.org.x:k8s", null, false, null);
    assertThat(host)
        .usingRecursiveComparison()
        .ignoringFields("secretRef")
        .isEqualTo(spec.getIscsi());
    assertThat(target.chapData()).isEqualTo(pv.secret().orElseThrow().getStringData());
  }

  @Test
  void itsTextShowsNoChapSecret() {
    IscsiTarget target = IscsiTarget.of(chapExport);
    assertThat(target.session()).as("the local Cinder's export asks for CHAP").isNotNull();
    assertThat(target.toString()).doesNotContain(target.session().password()).contains("hidden");
  }
}
