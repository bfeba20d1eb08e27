package org.standalonecinder.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/** Which ReferenceGrants let claims of namespace {@code apps} clone the claim {@code db}. */
class ReferenceGrantsTest {

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> specs(String yaml) {
    Object o = new Load(LoadSettings.builder().build()).loadFromString(yaml);
    return o == null ? List.of() : (List<Map<String, Object>>) o;
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "every claim to apps | [{from: [{group: '', kind: PersistentVolumeClaim, namespace: apps}],"
            + " to: [{group: '', kind: PersistentVolumeClaim}]}] | true",
        "db by name | [{from: [{group: '', kind: PersistentVolumeClaim, namespace: apps}],"
            + " to: [{group: '', kind: PersistentVolumeClaim, name: db}]}] | true",
        "an empty name is every claim | [{from: [{group: '', kind: PersistentVolumeClaim,"
            + " namespace: apps}], to: [{group: '', kind: PersistentVolumeClaim, name: ''}]}] | true",
        "one of several entries | [{from: [{group: '', kind: Pod, namespace: apps}, {group: '',"
            + " kind: PersistentVolumeClaim, namespace: apps}], to: [{group: '', kind: Secret},"
            + " {group: '', kind: PersistentVolumeClaim, name: db}]}] | true",
        "another claim by name | [{from: [{group: '', kind: PersistentVolumeClaim, namespace:"
            + " apps}], to: [{group: '', kind: PersistentVolumeClaim, name: other}]}] | false",
        "another namespace | [{from: [{group: '', kind: PersistentVolumeClaim, namespace: web}],"
            + " to: [{group: '', kind: PersistentVolumeClaim}]}] | false",
        "Gateways of apps, not claims | [{from: [{group: gateway.networking.k8s.io, kind:"
            + " Gateway, namespace: apps}], to: [{group: '', kind: PersistentVolumeClaim}]}] | false",
        "claims of apps to Secrets | [{from: [{group: '', kind: PersistentVolumeClaim, namespace:"
            + " apps}], to: [{group: '', kind: Secret}]}] | false",
        "a claim kind of another group | [{from: [{group: '', kind: PersistentVolumeClaim,"
            + " namespace: apps}], to: [{group: example.com, kind: PersistentVolumeClaim}]}] | false",
        "from and to in two grants | [{from: [{group: '', kind: PersistentVolumeClaim, namespace:"
            + " apps}], to: [{group: '', kind: Secret}]}, {from: [{group: '', kind: Pod, namespace:"
            + " apps}], to: [{group: '', kind: PersistentVolumeClaim}]}] | false",
        "no from | [{to: [{group: '', kind: PersistentVolumeClaim}]}] | false",
        "from is not a list | [{from: apps, to: [{group: '', kind: PersistentVolumeClaim}]}] |"
            + " false",
        "entries that are not maps | [{from: [apps], to: [db]}] | false",
        "no grants | [] | false",
      })
  void aGrantAllowsExactlyWhatItNames(String name, String yaml, boolean allows) {
    assertThat(ReferenceGrants.allowClaim(specs(yaml), "apps", "db")).isEqualTo(allows);
  }
}
