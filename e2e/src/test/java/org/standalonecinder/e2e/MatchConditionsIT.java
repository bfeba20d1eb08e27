package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelRuntimeFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The webhook configurations' {@code matchConditions} (manifests/match-conditions; the chart's form
 * renders the same, {@link ManifestsIT}) evaluated as a Kubernetes 1.28+ API server evaluates them,
 * with Google's CEL for Java: dev/kube-local's 1.20 cannot run them. Every write a rule acts on
 * (asks for a clone, says it is one, carries a token, names a data source, shares a filesystem,
 * touches a clone annotation, changes the request) must reach the webhook; what no rule acts on (a
 * plain claim, a bind, a finalizer removal) must not, so that an outage of the webhook blocks none
 * of it. Each condition must be seen both true and false by some row, so that no row can pass on a
 * condition that never decides.
 */
class MatchConditionsIT {

  private static final ObjectMapper YAML = new YAMLMapper();
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String PROVISIONER =
      "system:serviceaccount:standalone-cinder:standalone-cinder";

  /** By "kind/entry": the entry's conditions, name to expression. */
  private static final Map<String, Map<String, String>> CONDITIONS = new LinkedHashMap<>();

  /** By "entry: condition": the results it gave over the rows. */
  private static final Map<String, Set<Boolean>> SEEN = new HashMap<>();

  static final CelCompiler COMPILER =
      CelCompilerFactory.standardCelCompilerBuilder()
          .setStandardMacros(dev.cel.parser.CelStandardMacro.STANDARD_MACROS)
          .addVar("object", SimpleType.DYN)
          .addVar("oldObject", SimpleType.DYN)
          .addVar("request", SimpleType.DYN)
          .build();
  static final CelRuntime RUNTIME = CelRuntimeFactory.standardCelRuntimeBuilder().build();

  @BeforeAll
  static void render() throws Exception {
    for (JsonNode o : ManifestsIT.objects(ManifestsIT.kustomize("manifests/match-conditions"))) {
      String kind = o.path("kind").asText();
      if (!kind.endsWith("WebhookConfiguration")) {
        continue;
      }
      for (JsonNode w : o.path("webhooks")) {
        Map<String, String> conditions = new LinkedHashMap<>();
        w.path("matchConditions")
            .forEach(c -> conditions.put(c.path("name").asText(), c.path("expression").asText()));
        CONDITIONS.put(
            kind.replace("WebhookConfiguration", "") + "/" + w.path("name").asText(), conditions);
      }
    }
  }

  static final String CLAIMS = "Mutating/claims.webhook.standalone-cinder.io";
  static final String CLAIMS_VALIDATING = "Validating/claims.webhook.standalone-cinder.io";
  static final String UPDATES = "Validating/claim-updates.webhook.standalone-cinder.io";
  static final String STATEFULSETS = "Validating/statefulsets.webhook.standalone-cinder.io";

  static String claim(String annotations, String spec) {
    return "{metadata: {name: c, namespace: apps"
        + (annotations.isEmpty() ? "" : ", annotations: {" + annotations + "}")
        + "}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}},"
        + " storageClassName: smart"
        + (spec.isEmpty() ? "" : ", " + spec)
        + "}}";
  }

  static String statefulSet(String templateAnnotations, String templateSpec) {
    return "{metadata: {name: db, namespace: apps}, spec: {serviceName: db, template: {},"
        + " volumeClaimTemplates: [{metadata: {name: data"
        + (templateAnnotations.isEmpty() ? "" : ", annotations: {" + templateAnnotations + "}")
        + "}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}"
        + (templateSpec.isEmpty() ? "" : ", " + templateSpec)
        + "}}]}}";
  }

  static Stream<Arguments> rows() {
    String clone = "'k8s.io/CloneRequest': victim/db";
    List<Arguments> rows = new ArrayList<>();
    for (String entry : List.of(CLAIMS, CLAIMS_VALIDATING)) {
      String e = entry.startsWith("Mutating") ? " (mutating)" : " (validating)";
      rows.addAll(
          List.of(
              Arguments.of("a plain claim" + e, entry, "alice", claim("", ""), null, false),
              Arguments.of(
                  "a plain claim with annotations of its own" + e,
                  entry,
                  "alice",
                  claim("team: db, 'volume.beta.kubernetes.io/storage-class': x", ""),
                  null,
                  false),
              Arguments.of(
                  "a claim that can be read only by many" + e,
                  entry,
                  "alice",
                  claim("", "accessModes: [ReadOnlyMany]"),
                  null,
                  false),
              Arguments.of("a clone request" + e, entry, "alice", claim(clone, ""), null, true),
              Arguments.of(
                  "a forged CloneOf" + e,
                  entry,
                  "alice",
                  claim("'k8s.io/CloneOf': victim/db", ""),
                  null,
                  true),
              Arguments.of(
                  "a token the user brings" + e,
                  entry,
                  "alice",
                  claim("'standalone-cinder.io/clone-token': forged", ""),
                  null,
                  true),
              Arguments.of(
                  "a claim data source" + e,
                  entry,
                  "alice",
                  claim("", "dataSource: {kind: PersistentVolumeClaim, name: db}"),
                  null,
                  true),
              Arguments.of(
                  "a snapshot data source reference" + e,
                  entry,
                  "alice",
                  claim(
                      "",
                      "dataSourceRef: {apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot,"
                          + " name: s}"),
                  null,
                  true),
              Arguments.of(
                  "a shared filesystem" + e,
                  entry,
                  "alice",
                  claim("", "accessModes: [ReadWriteOnce, ReadWriteMany]"),
                  null,
                  true),
              Arguments.of(
                  "a claim created by the statefulset controller from a cloning template" + e,
                  entry,
                  "system:serviceaccount:kube-system:statefulset-controller",
                  claim(clone, ""),
                  null,
                  true)));
    }
    String bound = "volumeName: pvc-1";
    rows.addAll(
        List.of(
            Arguments.of(
                "the PV controller binds a clone",
                UPDATES,
                "system:serviceaccount:kube-system:persistent-volume-binder",
                claim(clone + ", 'pv.kubernetes.io/bind-completed': 'yes'", bound),
                claim(clone, ""),
                false),
            Arguments.of(
                "the protection controller removes its finalizer",
                UPDATES,
                "system:serviceaccount:kube-system:pvc-protection-controller",
                claim(clone, bound),
                claim(clone, bound),
                false),
            Arguments.of(
                "the controller manager without per-controller credentials binds",
                UPDATES,
                "system:kube-controller-manager",
                claim(clone, bound),
                claim(clone, ""),
                false),
            Arguments.of(
                "a user adds a clone request to a bound claim",
                UPDATES,
                "alice",
                claim(clone, bound),
                claim("", bound),
                true),
            Arguments.of(
                "a user changes the clone request",
                UPDATES,
                "alice",
                claim("'k8s.io/CloneRequest': victim/other", bound),
                claim(clone, bound),
                true),
            Arguments.of(
                "a user removes the clone request",
                UPDATES,
                "alice",
                claim("", bound),
                claim(clone, bound),
                true),
            Arguments.of(
                "a user swaps in a token of another clone",
                UPDATES,
                "alice",
                claim(clone + ", 'standalone-cinder.io/clone-token': other", ""),
                claim(clone + ", 'standalone-cinder.io/clone-token': mine", ""),
                true),
            Arguments.of(
                "a user forges CloneOf on a claim without annotations",
                UPDATES,
                "alice",
                claim("'k8s.io/CloneOf': victim/db", bound),
                claim("", bound),
                true),
            Arguments.of(
                "the provisioner records CloneOf",
                UPDATES,
                PROVISIONER,
                claim(clone + ", 'k8s.io/CloneOf': victim/db", bound),
                claim(clone, bound),
                true),
            Arguments.of(
                "a user relabels a clone, its annotations unchanged",
                UPDATES,
                "alice",
                claim(clone + ", team: db", bound),
                claim(clone + ", team: web", bound),
                false),
            Arguments.of(
                "a user grows a plain claim (a Ceph RBD claim's growth is refused)",
                UPDATES,
                "alice",
                claim("", "resources: {requests: {storage: 2Gi}}"),
                claim("", ""),
                true),
            Arguments.of(
                "a user grows a clone",
                UPDATES,
                "alice",
                claim(clone, bound + ", resources: {requests: {storage: 2Gi}}"),
                claim(clone, bound),
                true),
            Arguments.of(
                "the binder binds a claim whose request it did not change",
                UPDATES,
                "system:serviceaccount:kube-system:persistent-volume-binder",
                claim("", bound),
                claim("", ""),
                false),
            Arguments.of(
                "a StatefulSet whose template clones",
                STATEFULSETS,
                "alice",
                statefulSet(clone, ""),
                null,
                true),
            Arguments.of(
                "a StatefulSet whose template names a data source",
                STATEFULSETS,
                "alice",
                statefulSet("", "dataSource: {kind: PersistentVolumeClaim, name: db}"),
                null,
                true),
            Arguments.of(
                "a StatefulSet with plain templates",
                STATEFULSETS,
                "alice",
                statefulSet("team: db", ""),
                null,
                false),
            Arguments.of(
                "a StatefulSet without templates",
                STATEFULSETS,
                "alice",
                "{metadata: {name: web, namespace: apps}, spec: {serviceName: web, template: {}}}",
                null,
                false)));
    return rows.stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void aWriteReachesTheWebhookExactlyWhenARuleActsOnIt(
      String name, String entry, String user, String object, String oldObject, boolean reaches)
      throws Exception {
    Map<String, String> conditions = CONDITIONS.get(entry);
    assertThat(conditions).as("the conditions of " + entry).isNotNull().isNotEmpty();
    Map<String, Object> vars = new HashMap<>();
    vars.put("object", value(object));
    if (oldObject != null) {
      vars.put("oldObject", value(oldObject));
    }
    vars.put(
        "request",
        Map.of(
            "operation",
            oldObject == null ? "CREATE" : "UPDATE",
            "userInfo",
            Map.of("username", user, "groups", List.of("system:authenticated"))));
    boolean all = true;
    List<String> results = new ArrayList<>();
    for (var c : conditions.entrySet()) {
      // A condition that does not compile or cannot be evaluated fails the row: an API server
      // would refuse the configuration, or apply the failure policy to every write.
      CelRuntime.Program program = RUNTIME.createProgram(COMPILER.compile(c.getValue()).getAst());
      Object result = program.eval(vars);
      assertThat(result).as(c.getKey() + " gives a bool").isInstanceOf(Boolean.class);
      boolean b = (Boolean) result;
      SEEN.computeIfAbsent(entry + ": " + c.getKey(), k -> new TreeSet<>()).add(b);
      results.add(c.getKey() + "=" + b);
      all &= b;
    }
    assertThat(all).as(name + " reaches the webhook (" + results + ")").isEqualTo(reaches);
  }

  @AfterAll
  static void everyConditionDecidedSomeRow() {
    for (var e : CONDITIONS.entrySet()) {
      for (String condition : e.getValue().keySet()) {
        assertThat(SEEN.get(e.getKey() + ": " + condition))
            .as(e.getKey() + ": " + condition + " was true in some row and false in another")
            .containsExactlyInAnyOrder(false, true);
      }
    }
  }

  /** YAML flow text as CEL sees a Kubernetes object: maps, lists, strings, booleans, longs. */
  private static Object value(String yaml) throws Exception {
    return JSON.convertValue(YAML.readTree(yaml), Object.class);
  }
}
