package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cel.compiler.CelCompiler;
import dev.cel.runtime.CelRuntime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The attack: the webhook's token stolen (its account may update its two configurations, and RBAC
 * cannot narrow that to the caBundle), used to switch the webhook off or point the API server
 * elsewhere. manifests/cabundle-guard's ValidatingAdmissionPolicy (the chart renders the same,
 * {@link ManifestsIT}) evaluated as a Kubernetes 1.30+ API server evaluates it, with Google's CEL
 * for Java: dev/kube-local's 1.20 has no such policies. Each row changes the configurations as
 * rendered; only a new caBundle (and what every update changes) may pass, and only the webhook's
 * account is held to it. Each validation is seen false in some row.
 */
class CaBundleGuardIT {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String WEBHOOK =
      "system:serviceaccount:standalone-cinder:standalone-cinder-webhook";

  // Compiled and run as MatchConditionsIT does: object, oldObject and request as JSON values.
  private static final CelCompiler COMPILER = MatchConditionsIT.COMPILER;
  private static final CelRuntime RUNTIME = MatchConditionsIT.RUNTIME;

  private static JsonNode policy;
  private static final Map<String, JsonNode> CONFIGURATIONS = new HashMap<>();
  private static final Map<Integer, Set<Boolean>> SEEN = new HashMap<>();

  @BeforeAll
  static void render() throws Exception {
    for (JsonNode o : ManifestsIT.objects(ManifestsIT.kustomize("manifests/cabundle-guard"))) {
      String kind = o.path("kind").asText();
      if (kind.equals("ValidatingAdmissionPolicy")) {
        policy = o;
      } else if (kind.endsWith("WebhookConfiguration")) {
        ObjectNode c = o.deepCopy();
        // As the API server holds them: the caBundle written, a version, managed fields.
        c.withArray("webhooks")
            .forEach(w -> ((ObjectNode) w.path("clientConfig")).put("caBundle", "b2xk"));
        ((ObjectNode) c.path("metadata")).put("resourceVersion", "41");
        CONFIGURATIONS.put(kind.replace("WebhookConfiguration", ""), c);
      }
    }
    assertThat(policy).as("the policy").isNotNull();
    assertThat(CONFIGURATIONS).containsOnlyKeys("Mutating", "Validating");
  }

  private static Arguments row(
      String name, String kind, boolean allowed, Consumer<ObjectNode> change) {
    return Arguments.of(name, kind, WEBHOOK, change, allowed);
  }

  private static ObjectNode entry(ObjectNode c, int i) {
    return (ObjectNode) c.withArray("webhooks").get(i);
  }

  static Stream<Arguments> rows() {
    List<Arguments> rows = new ArrayList<>();
    for (String k : List.of("Mutating", "Validating")) {
      rows.addAll(
          List.of(
              row(
                  "the caBundle rotated (" + k + ")",
                  k,
                  true,
                  c ->
                      c.withArray("webhooks")
                          .forEach(
                              w -> ((ObjectNode) w.path("clientConfig")).put("caBundle", "bmV3"))),
              row(
                  "a new version and managed fields, nothing else (" + k + ")",
                  k,
                  true,
                  c ->
                      ((ObjectNode) c.path("metadata"))
                          .put("resourceVersion", "42")
                          .putArray("managedFields")
                          .addObject()
                          .put("manager", "webhook")),
              row(
                  "failurePolicy Ignore (" + k + ")",
                  k,
                  false,
                  c -> entry(c, 0).put("failurePolicy", "Ignore")),
              row("rules emptied (" + k + ")", k, false, c -> entry(c, 0).putArray("rules")),
              row("an entry removed (" + k + ")", k, false, c -> c.withArray("webhooks").remove(0)),
              row(
                  "an entry renamed (" + k + ")",
                  k,
                  false,
                  c -> entry(c, 0).put("name", "other.example.com")),
              row(
                  "a URL of the attacker's (" + k + ")",
                  k,
                  false,
                  c -> {
                    ObjectNode cc = (ObjectNode) entry(c, 0).path("clientConfig");
                    cc.remove("service");
                    cc.put("url", "https://attacker.example.com/validate");
                  }),
              row(
                  "the Service's port changed (" + k + ")",
                  k,
                  false,
                  c -> ((ObjectNode) entry(c, 0).at("/clientConfig/service")).put("port", 8443)),
              row(
                  "every namespace skipped (" + k + ")",
                  k,
                  false,
                  c ->
                      entry(c, 0)
                          .putObject("namespaceSelector")
                          .putObject("matchLabels")
                          .put("never", "x")),
              row(
                  "an object selector added (" + k + ")",
                  k,
                  false,
                  c ->
                      entry(c, 0)
                          .putObject("objectSelector")
                          .putObject("matchLabels")
                          .put("never", "x")),
              row(
                  "a shorter timeout (" + k + ")",
                  k,
                  false,
                  c -> entry(c, 0).put("timeoutSeconds", 1)),
              row(
                  "match conditions that never match (" + k + ")",
                  k,
                  false,
                  c ->
                      entry(c, 0)
                          .putArray("matchConditions")
                          .addObject()
                          .put("name", "never")
                          .put("expression", "false")),
              row(
                  "matchPolicy changed (" + k + ")",
                  k,
                  false,
                  c -> entry(c, 0).put("matchPolicy", "Exact")),
              row(
                  "sideEffects changed (" + k + ")",
                  k,
                  false,
                  c -> entry(c, 0).put("sideEffects", "Some")),
              row(
                  "admissionReviewVersions changed (" + k + ")",
                  k,
                  false,
                  c -> entry(c, 0).putArray("admissionReviewVersions").add("v1beta1")),
              row(
                  "an owner added, for the garbage collector to delete it (" + k + ")",
                  k,
                  false,
                  c ->
                      ((ObjectNode) c.path("metadata"))
                          .putArray("ownerReferences")
                          .addObject()
                          .put("apiVersion", "v1")
                          .put("kind", "ConfigMap")
                          .put("name", "gone")
                          .put("uid", "1")),
              row(
                  "a finalizer added (" + k + ")",
                  k,
                  false,
                  c ->
                      ((ObjectNode) c.path("metadata"))
                          .putArray("finalizers")
                          .add("example.com/hold")),
              row(
                  "a label changed (" + k + ")",
                  k,
                  false,
                  c ->
                      ((ObjectNode) c.path("metadata"))
                          .withObject("/labels")
                          .put("app.kubernetes.io/name", "x"))));
    }
    rows.add(
        row(
            "reinvocationPolicy changed (Mutating)",
            "Mutating",
            false,
            c -> entry(c, 0).put("reinvocationPolicy", "IfNeeded")));
    rows.add(
        Arguments.of(
            "an admin switches to Ignore: not the webhook's account",
            "Validating",
            "alice",
            (Consumer<ObjectNode>) c -> entry(c, 0).put("failurePolicy", "Ignore"),
            true));
    return rows.stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void onlyTheCaBundleMayBeChangedByTheWebhooksAccount(
      String name, String kind, String user, Consumer<ObjectNode> change, boolean allowed)
      throws Exception {
    JsonNode old = CONFIGURATIONS.get(kind);
    ObjectNode changed = old.deepCopy();
    change.accept(changed);
    Map<String, Object> vars = new HashMap<>();
    vars.put("object", JSON.convertValue(changed, Object.class));
    vars.put("oldObject", JSON.convertValue(old, Object.class));
    vars.put(
        "request",
        Map.of(
            "operation", "UPDATE",
            "kind",
                Map.of(
                    "group",
                    "admissionregistration.k8s.io",
                    "version",
                    "v1",
                    "kind",
                    kind + "WebhookConfiguration"),
            "userInfo", Map.of("username", user, "groups", List.of("system:authenticated"))));
    boolean applies = true;
    for (JsonNode c : policy.at("/spec/matchConditions")) {
      applies &= eval(c.path("expression").asText(), vars);
    }
    boolean passes = true;
    List<String> results = new ArrayList<>();
    if (applies) {
      ArrayNode validations = (ArrayNode) policy.at("/spec/validations");
      for (int i = 0; i < validations.size(); i++) {
        boolean b = eval(validations.get(i).path("expression").asText(), vars);
        SEEN.computeIfAbsent(i, k -> new TreeSet<>()).add(b);
        results.add("validation " + i + "=" + b);
        passes &= b;
      }
    }
    assertThat(passes).as(name + " is allowed (" + results + ")").isEqualTo(allowed);
  }

  // A policy whose expression does not compile or cannot be evaluated fails the row: the API
  // server would refuse the policy, or deny every update (failurePolicy Fail).
  private static boolean eval(String expression, Map<String, Object> vars) throws Exception {
    CelRuntime.Program program = RUNTIME.createProgram(COMPILER.compile(expression).getAst());
    Object result = program.eval(vars);
    assertThat(result).as(expression + " gives a bool").isInstanceOf(Boolean.class);
    return (Boolean) result;
  }

  @AfterAll
  static void everyValidationDecidedSomeRow() {
    assertThat(SEEN).hasSize(policy.at("/spec/validations").size());
    SEEN.forEach(
        (i, seen) ->
            assertThat(seen)
                .as("validation " + i + " true in some row and false in another")
                .containsExactlyInAnyOrder(false, true));
  }
}
