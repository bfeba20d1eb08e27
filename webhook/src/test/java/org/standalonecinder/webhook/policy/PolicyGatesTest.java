package org.standalonecinder.webhook.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.webhook.admission.Decision;

/** The policy file's effects: exempt namespaces, and which classes may enable smartclone. */
class PolicyGatesTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "an exempt namespace is left alone | sandbox | true",
        "another namespace gets the rules | apps | false",
        "a cluster-scoped object is never exempt | '' | false"
      })
  void exemptNamespaces(String name, String namespace, boolean allowed) {
    ClaimRuleTable.Cluster cluster = new ClaimRuleTable.Cluster();
    LabelSelector exempt =
        PolicyConfig.parse("exemptNamespaces: {matchLabels: {exempt: \"true\"}}")
            .exemptNamespaces();
    ExemptNamespaces gate =
        new ExemptNamespaces((r, m) -> Decision.deny(403, "r", "rules ran"), exempt, cluster);
    AdmissionRequest r = new AdmissionRequest();
    r.setNamespace(namespace);
    assertThat(gate.review(LeanRequests.of(r), true).allowed()).isEqualTo(allowed);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a listed class may enable smartclone | gold | true | true | ",
        "an unlisted class may not | bronze | true | false | allows it only for [gold]",
        "an unlisted class without smartclone is fine | bronze | false | true | ",
        "no list: any class may | bronze | true | true | any"
      })
  void smartcloneClasses(
      String name, String className, boolean smartclone, boolean allowed, String message) {
    Set<String> listed = "any".equals(message) ? Set.of() : Set.of("gold");
    StorageClassPolicy policy = new StorageClassPolicy("openstack.org/standalone-cinder", listed);
    AdmissionRequest r = new AdmissionRequest();
    r.setOperation("CREATE");
    r.setObject(
        new StorageClassBuilder()
            .withNewMetadata()
            .withName(className)
            .endMetadata()
            .withProvisioner("openstack.org/standalone-cinder")
            .withParameters(Map.of("smartclone", Boolean.toString(smartclone)))
            .build());
    Decision d = policy.review(LeanRequests.of(r), false);
    assertThat(d.allowed()).isEqualTo(allowed);
    if (!allowed) {
      assertThat(d.message()).contains(message);
    }
  }
}
