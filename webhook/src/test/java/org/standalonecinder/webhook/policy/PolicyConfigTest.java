package org.standalonecinder.webhook.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.admission.v1.AdmissionRequest;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.webhook.admission.Decision;
import org.standalonecinder.webhook.policy.CrossNamespaceRule.CrossNamespace;

/** The admin policy file: defaults, every key, every rejection; selectors; audit mode. */
class PolicyConfigTest {

  @Test
  void noFileMeansTheSafeDefaults() {
    assertThat(PolicyConfig.parse("")).isEqualTo(PolicyConfig.DEFAULTS);
    assertThat(PolicyConfig.DEFAULTS.enforce()).isTrue();
    assertThat(PolicyConfig.DEFAULTS.crossNamespace()).isEqualTo(CrossNamespace.AUTHORIZED);
    assertThat(PolicyConfig.DEFAULTS.exemptNamespaces().matches(Map.of())).isFalse();
    assertThat(PolicyConfig.DEFAULTS.undersizedClone()).isEqualTo(CloneSizeRule.Undersized.DENY);
  }

  @Test
  void everyKey() {
    PolicyConfig c =
        PolicyConfig.parse(
            """
            mode: audit
            crossNamespace: deny
            exemptNamespaces:
              matchLabels: {exempt: "true"}
            smartcloneClasses: [fast, gold]
            undersizedClone: raise
            cinderCheckUnavailable: allow
            """);
    assertThat(c.enforce()).isFalse();
    assertThat(c.crossNamespace()).isEqualTo(CrossNamespace.DENY);
    assertThat(c.exemptNamespaces().matches(Map.of("exempt", "true"))).isTrue();
    assertThat(c.exemptNamespaces().matches(Map.of("exempt", "false"))).isFalse();
    assertThat(c.smartcloneClasses()).isEqualTo(Set.of("fast", "gold"));
    assertThat(c.undersizedClone()).isEqualTo(CloneSizeRule.Undersized.RAISE);
    assertThat(c.cinderCheckUnavailable()).isEqualTo(CinderCheckRule.CheckUnavailable.ALLOW);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "unknown key | crossnamespace: deny | unknown key 'crossnamespace'",
        "bad mode | mode: strict | mode 'strict' must be enforce or audit",
        "bad cross-namespace | crossNamespace: maybe | must be authorized, deny or allow",
        "bad undersized | undersizedClone: grow | undersizedClone 'grow' must be deny or raise",
        "bad cinder check policy | cinderCheckUnavailable: maybe | cinderCheckUnavailable 'maybe' must be deny or allow",
        "classes not a list | smartcloneClasses: fast | must be a list of StorageClass names",
        "selector not a map | exemptNamespaces: all | must be a label selector",
        "bad operator | 'exemptNamespaces: {matchExpressions: [{key: a, operator: Like, values: [x]}]}' | operator 'Like' must be",
        "In without values | 'exemptNamespaces: {matchExpressions: [{key: a, operator: In}]}' | operator In needs values",
        "not a map | '- a' | must be a map of settings",
        "not YAML | 'a: [b' | not valid YAML",
        "two problems at once | 'mode: x\ncrossNamespace: y' | mode 'x'",
        "a key given twice: which one was meant is not guessed | 'mode: audit\nmode: enforce' | found duplicate key mode"
      })
  void rejections(String name, String yaml, String message) {
    assertThatThrownBy(() -> PolicyConfig.parse(yaml.replace("\\n", "\n")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining(message);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "In matches | tier | In | sandbox,dev | tier=dev | true",
        "In misses | tier | In | sandbox | tier=prod | false",
        "In needs the label | tier | In | sandbox | | false",
        "NotIn without the label | tier | NotIn | prod | | true",
        "NotIn with a listed value | tier | NotIn | prod | tier=prod | false",
        "Exists | tier | Exists | | tier=x | true",
        "DoesNotExist | tier | DoesNotExist | | tier=x | false"
      })
  void selectorExpressions(
      String name, String key, String op, String values, String label, boolean matches) {
    String vals = values == null ? "" : ", values: [" + values + "]";
    LabelSelector s =
        PolicyConfig.parse(
                "exemptNamespaces: {matchExpressions: [{key: "
                    + key
                    + ", operator: "
                    + op
                    + vals
                    + "}]}")
            .exemptNamespaces();
    Map<String, String> labels =
        label == null ? Map.of() : Map.of(label.split("=")[0], label.split("=")[1]);
    assertThat(s.matches(labels)).isEqualTo(matches);
  }

  @Test
  void auditModeTurnsADenialIntoAWarningAndKeepsAllows() {
    AdmissionRequest r = new AdmissionRequest();
    AuditMode denying = new AuditMode((req, m) -> Decision.deny(403, "r", "no clones here"));
    Decision d = denying.review(LeanRequests.of(r), false);
    assertThat(d.allowed()).isTrue();
    assertThat(d.warnings())
        .containsExactly("standalone-cinder policy (audit mode) would deny this: no clones here");
    Decision mutated = denying.review(LeanRequests.of(r), true);
    assertThat(mutated.allowed()).isTrue();
    assertThat(mutated.warnings()).as("said once, by the validating endpoint").isEmpty();
    AuditMode allowing =
        new AuditMode(
            (req, m) -> Decision.allow(java.util.List.of("w"), "[]", java.util.List.of("r")));
    assertThat(allowing.review(LeanRequests.of(r), true).jsonPatch()).isEqualTo("[]");
    assertThat(allowing.review(LeanRequests.of(r), true).warnings()).containsExactly("w");
  }
}
