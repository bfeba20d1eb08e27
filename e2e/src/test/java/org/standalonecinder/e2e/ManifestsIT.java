package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfigLoader;

/**
 * Every way the project is installed, rendered as a user renders it — {@code kubectl kustomize} of
 * each kustomization, {@code helm template} of the chart with its documented examples — and each
 * object checked twice: it reads into fabric8's model with no field the model does not know (a
 * misspelt field is silently dropped by the API server), and it passes the OpenAPI schemas of the
 * npm package kubernetes-models (types, required fields, enums). The chart with the required values
 * renders the objects manifests/base holds, and with cert-manager those of manifests/cert-manager.
 */
@Order(-2)
class ManifestsIT {

  private static final Path ROOT = Path.of(System.getProperty("project.root", "..")).normalize();
  private static final Path CHART = ROOT.resolve("charts/standalone-cinder");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final YAMLMapper YAML = new YAMLMapper();

  /** The values without which the chart refuses to render. */
  static final Map<String, String> REQUIRED =
      Map.of(
          "clusterId", "my-cluster",
          "initiatorName", "iqn.2026-11.org.example:my-cluster",
          "cloudConfig.existingSecret", "standalone-cinder-cloud-config",
          // manifests/base's image names, which kustomize users replace (docs/install.md)
          "image.webhook.repository", "standalone-cinder/webhook",
          "image.provisioner.repository", "standalone-cinder/provisioner");

  private static final Map<String, List<JsonNode>> RENDERS = new LinkedHashMap<>();

  /** Every values file of charts/standalone-cinder/examples, each rendered and checked. */
  private static final List<String> EXAMPLES = examples();

  private static List<String> examples() {
    try (Stream<Path> files = Files.list(CHART.resolve("examples"))) {
      return files
          .map(f -> f.getFileName().toString())
          .filter(f -> f.endsWith(".yaml"))
          .map(f -> f.substring(0, f.length() - ".yaml".length()))
          .sorted()
          .toList();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** By render: what the schema check found, one line per object that failed it. */
  private static final Map<String, List<String>> SCHEMA_PROBLEMS = new LinkedHashMap<>();

  static String kubectl() throws IOException {
    return LocalInstall.env(
            Path.of(System.getProperty("kube.local.env", "/tmp/kube-local/kube-local.env")))
        .get("KUBE_LOCAL_KUBECTL");
  }

  static String run(Path dir, List<String> cmd) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(300, TimeUnit.SECONDS)).as(String.join(" ", cmd)).isTrue();
    assertThat(p.exitValue()).as(String.join(" ", cmd) + "\n" + out).isZero();
    return out;
  }

  static List<JsonNode> objects(String yaml) throws IOException {
    List<JsonNode> out = new ArrayList<>();
    try (var it = YAML.readerFor(JsonNode.class).<JsonNode>readValues(yaml)) {
      while (it.hasNext()) {
        JsonNode n = it.next();
        if (n != null && !n.isNull() && !n.isMissingNode() && n.size() > 0) {
          out.add(n);
        }
      }
    }
    return out;
  }

  static String kustomize(String dir) throws Exception {
    return run(ROOT, List.of(kubectl(), "kustomize", ROOT.resolve(dir).toString()));
  }

  /** {@code helm template standalone-cinder charts/standalone-cinder -n standalone-cinder ...}. */
  static String template(Map<String, String> set, Path valuesFile) {
    TemplateCommand t =
        new Helm(CHART).template().withName("standalone-cinder").withNamespace(LocalInstall.NS);
    if (valuesFile != null) {
      t = t.withValuesFile(valuesFile);
    }
    for (var e : new TreeMap<>(set).entrySet()) {
      t = t.set(e.getKey(), e.getValue());
    }
    return t.call();
  }

  @BeforeAll
  static void render() throws Exception {
    RENDERS.put("kustomize manifests/base", objects(kustomize("manifests/base")));
    RENDERS.put("kustomize manifests/cert-manager", objects(kustomize("manifests/cert-manager")));
    RENDERS.put(
        "kustomize dev/kube-local/manifests", objects(kustomize("dev/kube-local/manifests")));
    RENDERS.put(
        "kustomize dev/node-local/deployment", objects(kustomize("dev/node-local/deployment")));
    RENDERS.put(
        "manifests/examples/storageclass.yaml",
        objects(Files.readString(ROOT.resolve("manifests/examples/storageclass.yaml"))));
    RENDERS.put(
        "kustomize manifests/match-conditions", objects(kustomize("manifests/match-conditions")));
    RENDERS.put(
        "kustomize manifests/network-policy", objects(kustomize("manifests/network-policy")));
    RENDERS.put("kustomize manifests/adopt-go", objects(kustomize("manifests/adopt-go")));
    RENDERS.put("kustomize manifests/node-growth", objects(kustomize("manifests/node-growth")));
    RENDERS.put(
        "kustomize manifests/cabundle-guard", objects(kustomize("manifests/cabundle-guard")));
    // Helm's own default capabilities name a current Kubernetes: each form is asked for by name.
    Map<String, String> selectors = new LinkedHashMap<>(REQUIRED);
    selectors.put("webhook.matchConditions", "false");
    selectors.put("webhook.caBundleGuard", "false");
    RENDERS.put("helm template (required values)", objects(template(selectors, null)));
    Map<String, String> conditions = new LinkedHashMap<>(REQUIRED);
    conditions.put("webhook.matchConditions", "true");
    RENDERS.put("helm template (match conditions)", objects(template(conditions, null)));
    Map<String, String> guarded = new LinkedHashMap<>(selectors);
    guarded.put("webhook.caBundleGuard", "true");
    RENDERS.put("helm template (caBundle guard)", objects(template(guarded, null)));
    Map<String, String> fenced = new LinkedHashMap<>(selectors);
    fenced.put("networkPolicy.enabled", "true");
    fenced.put("networkPolicy.apiServer[0]", "192.0.2.10/32");
    fenced.put(
        "networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.kubernetes\\.io/metadata\\.name",
        "monitoring");
    RENDERS.put("helm template (network policy)", objects(template(fenced, null)));
    Map<String, String> adopting = new LinkedHashMap<>(selectors);
    adopting.put("adoptIdentities[0]", GO_IDENTITIES.get(0));
    adopting.put("adoptIdentities[1]", GO_IDENTITIES.get(1));
    RENDERS.put(
        "helm template (adopting the Go provisioner's PVs)", objects(template(adopting, null)));
    Map<String, String> cm = new LinkedHashMap<>(selectors);
    cm.put("certificates", "cert-manager");
    RENDERS.put("helm template (cert-manager)", objects(template(cm, null)));
    cm.put("certManager.issuerRef.name", "my-issuer");
    cm.put("certManager.issuerRef.kind", "ClusterIssuer");
    RENDERS.put("helm template (cert-manager, own issuer)", objects(template(cm, null)));
    for (String example : EXAMPLES) {
      RENDERS.put(
          "helm template -f examples/" + example + ".yaml",
          objects(template(Map.of(), CHART.resolve("examples/" + example + ".yaml"))));
    }
    schemas();
  }

  /** Runs validate.mjs over every object of every render (one node process). */
  private static void schemas() throws Exception {
    Path dir = Path.of("target/manifest-schemas").toAbsolutePath();
    Files.createDirectories(dir);
    for (String f : List.of("package.json", "package-lock.json", "validate.mjs")) {
      Files.copy(
          Path.of("src/test/node", f),
          dir.resolve(f),
          java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    }
    if (!Files.isDirectory(dir.resolve("node_modules/kubernetes-models"))) {
      run(dir, List.of("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"));
    }
    ArrayNode all = JSON.createArrayNode();
    RENDERS.values().forEach(all::addAll);
    Path input = dir.resolve("objects.json");
    JSON.writeValue(input.toFile(), all);
    Process p =
        new ProcessBuilder("node", "validate.mjs")
            .directory(dir.toFile())
            .redirectInput(input.toFile())
            .start();
    byte[] out = p.getInputStream().readAllBytes();
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(err).isZero();
    JsonNode results = JSON.readTree(out);
    assertThat(results.size()).isEqualTo(all.size());
    int i = 0;
    for (var render : RENDERS.entrySet()) {
      List<String> problems = new ArrayList<>();
      for (JsonNode o : render.getValue()) {
        JsonNode r = results.get(i++);
        if (!r.path("error").isNull()) {
          problems.add(key(o) + " (" + r.path("model").asText() + "): " + r.path("error").asText());
        }
      }
      SCHEMA_PROBLEMS.put(render.getKey(), problems);
    }
  }

  static Stream<Arguments> renders() {
    return RENDERS.keySet().stream().map(Arguments::of);
  }

  /** The renders that install the project (not manifests/examples, the admin's own to write). */
  static Stream<Arguments> installs() {
    return RENDERS.keySet().stream()
        .filter(r -> !r.startsWith("manifests/examples/"))
        .map(Arguments::of);
  }

  private static String key(JsonNode o) {
    return o.path("kind").asText() + " " + o.path("metadata").path("name").asText();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("renders")
  void everyObjectIsKnownToFabric8WithNoUnknownField(String render) {
    List<String> problems = new ArrayList<>();
    for (JsonNode o : RENDERS.get(render)) {
      problems.addAll(unknownFields(o));
    }
    assertThat(problems).as(render).isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("renders")
  void everyObjectPassesTheOpenApiSchemas(String render) {
    assertThat(RENDERS.get(render)).isNotEmpty();
    assertThat(SCHEMA_PROBLEMS.get(render)).as(render).isEmpty();
  }

  /** The two checks catch what they are for (a check that cannot fail is no check). */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a misspelt container field | apps/v1 | Deployment | {\"spec\": {\"selector\": {}, \"template\": {\"spec\": {\"containers\": [{\"name\": \"c\", \"imagePullPolicyy\": \"Always\"}]}}}} | spec.template.spec.containers[0]: unknown [imagePullPolicyy]",
        "a misspelt top-level field | rbac.authorization.k8s.io/v1 | ClusterRole | {\"rulez\": []} | ClusterRole x : unknown [rulez]",
        "a kind fabric8 does not know | v1 | ConfigMapp | {\"data\": {}} | not a kind of fabric8's model"
      })
  void aMisspeltFieldOrKindIsReported(
      String name, String apiVersion, String kind, String fields, String expected)
      throws Exception {
    ObjectNode o = JSON.createObjectNode().put("apiVersion", apiVersion).put("kind", kind);
    o.putObject("metadata").put("name", "x");
    o.setAll((ObjectNode) JSON.readTree(fields));
    assertThat(unknownFields(o)).singleElement().asString().contains(expected);
  }

  /** Fields of {@code o} that fabric8's model for its kind does not have. */
  static List<String> unknownFields(JsonNode o) {
    List<String> out = new ArrayList<>();
    String where = o.path("apiVersion").asText() + " " + key(o);
    if (o.path("apiVersion").asText().startsWith("cert-manager.io/")
        || o.path("apiVersion").asText().startsWith("monitoring.coreos.com/")) {
      // No model of cert-manager's or Prometheus Operator's kinds here: the schema check covers
      // them.
      return out;
    }
    HasMetadata typed;
    try {
      typed = new KubernetesSerialization().unmarshal(o.toString(), HasMetadata.class);
    } catch (RuntimeException e) {
      out.add(where + ": " + e.getMessage());
      return out;
    }
    if (typed instanceof GenericKubernetesResource) {
      out.add(where + ": not a kind of fabric8's model");
      return out;
    }
    walk(typed, "", where, out);
    return out;
  }

  private static void walk(Object o, String path, String where, List<String> out) {
    if (o == null) {
      return;
    }
    if (o instanceof List<?> l) {
      for (int i = 0; i < l.size(); i++) {
        walk(l.get(i), path + "[" + i + "]", where, out);
      }
      return;
    }
    if (o instanceof Map<?, ?> m) {
      m.forEach((k, v) -> walk(v, path + "." + k, where, out));
      return;
    }
    if (!o.getClass().getName().startsWith("io.fabric8.kubernetes.api.model")) {
      return;
    }
    for (Method get : o.getClass().getMethods()) {
      if (get.getParameterCount() != 0
          || !get.getName().startsWith("get")
          || get.getDeclaringClass() == Object.class) {
        continue;
      }
      Object v;
      try {
        v = get.invoke(o);
      } catch (ReflectiveOperationException e) {
        throw new AssertionError(e);
      }
      if (get.getName().equals("getAdditionalProperties")) {
        if (v instanceof Map<?, ?> extra && !extra.isEmpty()) {
          out.add(where + " " + path + ": unknown " + new java.util.TreeSet<>(extra.keySet()));
        }
        continue;
      }
      String field = get.getName().substring(3);
      walk(
          v,
          (path.isEmpty() ? "" : path + ".")
              + Character.toLowerCase(field.charAt(0))
              + field.substring(1),
          where,
          out);
    }
  }

  @Test
  void helmLintFindsNothingWrong() {
    LintResult lint = new Helm(CHART).lint().strict().call();
    // Lint renders with values.yaml alone, where the required values are empty: those are
    // reported as information, as `helm lint` does; anything else is a finding.
    List<String> findings =
        lint.getMessages().stream()
            .filter(m -> !m.contains("icon is recommended"))
            .filter(m -> !m.startsWith("[INFO]"))
            .toList();
    assertThat(findings).isEmpty();
    assertThat(lint.isFailed()).as(lint.getMessages().toString()).isFalse();
  }

  @Test
  void theChartWithTheRequiredValuesRendersWhatManifestsBaseHolds() {
    assertSameObjects(
        RENDERS.get("kustomize manifests/base"), RENDERS.get("helm template (required values)"));
  }

  @Test
  void theChartWithMatchConditionsRendersWhatTheMatchConditionsOverlayHolds() {
    assertSameObjects(
        RENDERS.get("kustomize manifests/match-conditions"),
        RENDERS.get("helm template (match conditions)"));
  }

  @Test
  void theChartWithTheCaBundleGuardRendersWhatTheCaBundleGuardOverlayHolds() {
    assertSameObjects(
        RENDERS.get("kustomize manifests/cabundle-guard"),
        RENDERS.get("helm template (caBundle guard)"));
  }

  @Test
  void theChartWithANetworkPolicyRendersWhatTheNetworkPolicyOverlayHolds() {
    assertSameObjects(
        RENDERS.get("kustomize manifests/network-policy"),
        RENDERS.get("helm template (network policy)"));
  }

  @Test
  void theChartWithCertManagerRendersWhatManifestsCertManagerHolds() {
    assertSameObjects(
        RENDERS.get("kustomize manifests/cert-manager"),
        RENDERS.get("helm template (cert-manager)"));
  }

  @Test
  void theChartsOwnIssuerReplacesTheSelfSignedChain() {
    List<JsonNode> objects = RENDERS.get("helm template (cert-manager, own issuer)");
    assertThat(objects).noneMatch(o -> o.path("kind").asText().equals("Issuer"));
    JsonNode cert =
        objects.stream()
            .filter(o -> key(o).equals("Certificate standalone-cinder-webhook"))
            .findFirst()
            .orElseThrow();
    assertThat(cert.at("/spec/issuerRef/name").asText()).isEqualTo("my-issuer");
    assertThat(cert.at("/spec/issuerRef/kind").asText()).isEqualTo("ClusterIssuer");
  }

  /**
   * The cloud.conf the chart writes from values is one the provisioner reads, values with INI's
   * comment characters included.
   */
  @Test
  void theCloudConfFromValuesIsReadByTheProvisioner() throws Exception {
    Map<String, String> set = new LinkedHashMap<>(REQUIRED);
    set.remove("cloudConfig.existingSecret");
    set.put("cloudConfig.global.auth-url", "https://keystone.example:5000/v3");
    set.put("cloudConfig.global.username", "standalone-cinder");
    set.put("cloudConfig.global.password", "p4ss #not a comment; nor this");
    set.put("cloudConfig.global.tenant-name", "kubernetes");
    set.put("cloudConfig.global.domain-name", "Default");
    set.put("cloudConfig.blockStorage.request-timeout", "90");
    JsonNode secret =
        objects(template(set, null)).stream()
            .filter(o -> key(o).equals("Secret standalone-cinder-cloud-config"))
            .findFirst()
            .orElseThrow();
    Path conf = Files.createTempFile("cloud", ".conf");
    Files.writeString(conf, secret.at("/stringData/cloud.conf").asText());
    CloudConfig c = CloudConfigLoader.load(conf, Map.of());
    // The whole value, its comment characters included, reaches the provisioner.
    var password =
        (org.standalonecinder.provisioner.cinder.openstack.config.Credentials.V3Password)
            c.credentials();
    assertThat(password.password().reveal()).isEqualTo("p4ss #not a comment; nor this");
    assertThat(c.authUrl()).hasToString("https://keystone.example:5000/v3");
    assertThat(password.project().name()).isEqualTo("kubernetes");
    assertThat(c.requestTimeout()).isEqualTo(java.time.Duration.ofSeconds(90));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "no cluster id | clusterId= | clusterId is required",
        "no initiator | initiatorName= | initiatorName is required",
        "no cloud config | cloudConfig.existingSecret= | cloudConfig: set existingSecret",
        "an unknown certificate mode | certificates=vault | certificates must be one of the following: \"own\", \"cert-manager\"",
        "a class without a name | storageClasses[0].default=true | every storageClasses entry needs a name",
        "no webhook image | image.webhook.repository= | image.webhook.repository is required: no public image is published",
        "no provisioner image | image.provisioner.repository= | image.provisioner.repository is required",
        "an unknown failure policy | webhook.failurePolicy=Never | webhook.failurePolicy must be one of the following: \"Fail\", \"Ignore\"",
        "a misspelt top-level key | replica=3 | replica",
        "a misspelt nested key | image.webhook.repo=x | repo",
        "a misspelt class field | storageClasses[0].reclaimpolicy=Retain | reclaimpolicy",
        "a setting in lower case | settings.log_format=json | log_format",
        "a string for a number | workers=many | workers",
        "adopted identities as a setting | settings.ADOPT_IDENTITIES=x | use adoptIdentities (a list), which also grants",
        "an adopted identity with a space | adoptIdentities[0]=a b | adoptIdentities",
        "a digest that is a tag | image.webhook.digest=latest | digest",
        "a client CA without the name in its certificate | webhook.clientCA.configMap=apiserver-ca | webhook.clientCA.name is required with webhook.clientCA.configMap"
      })
  void badValuesAreRefusedWithWhatToSet(String name, String setting, String message) {
    Map<String, String> set = new LinkedHashMap<>(REQUIRED);
    int eq = setting.indexOf('=');
    set.put(setting.substring(0, eq), setting.substring(eq + 1));
    assertThatThrownBy(() -> template(set, null)).hasMessageContaining(message);
  }

  private static JsonNode only(List<JsonNode> objects, String key) {
    return objects.stream().filter(o -> key(o).equals(key)).findFirst().orElseThrow();
  }

  private static String checksum(Map<String, String> extra) throws IOException {
    Map<String, String> set = new LinkedHashMap<>(REQUIRED);
    set.putAll(extra);
    return only(objects(template(set, null)), "Deployment standalone-cinder")
        .at("/spec/template/metadata/annotations/checksum~1config")
        .asText();
  }

  /**
   * The Pods roll for what they read only at start (settings, a cloud.conf from values), never for
   * the policy, which the webhook re-reads in place: a policy change must not restart anything.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a policy change keeps the Pods | policy.mode=audit | false",
        "a policy key added keeps them | policy.cinderCheckUnavailable=allow | false",
        "a class added keeps them | storageClasses[0].name=more | false",
        "a setting rolls them | settings.LOG_FORMAT=json | true",
        "workers roll them | workers=8 | true",
        "another initiator name rolls them | initiatorName=iqn.2026-11.org.example:other | true"
      })
  void onlyWhatIsReadAtStartRollsThePods(String name, String setting, boolean rolls)
      throws IOException {
    int eq = setting.indexOf('=');
    String changed = checksum(Map.of(setting.substring(0, eq), setting.substring(eq + 1)));
    assertThat(!changed.equals(checksum(Map.of()))).as(name).isEqualTo(rolls);
  }

  /**
   * A second release in another namespace: its cluster-wide objects take the release's name (no
   * collision with the first), the webhook is told the name of its configurations and of its
   * provisioner, and the provisioner and its classes use the second name.
   */
  @Test
  void aSecondReleaseInAnotherNamespaceCollidesWithNothing() throws IOException {
    Map<String, String> set = new LinkedHashMap<>(REQUIRED);
    set.put("provisionerName", "example.org/second-cinder");
    set.put("storageClasses[0].name", "second");
    TemplateCommand t = new Helm(CHART).template().withName("second").withNamespace("team-b");
    for (var e : new TreeMap<>(set).entrySet()) {
      t = t.set(e.getKey(), e.getValue());
    }
    List<JsonNode> second = objects(t.call());
    List<String> firstNames =
        RENDERS.get("helm template (required values)").stream()
            .filter(o -> o.at("/metadata/namespace").isMissingNode())
            .map(ManifestsIT::key)
            .toList();
    List<JsonNode> clusterWide =
        second.stream().filter(o -> o.at("/metadata/namespace").isMissingNode()).toList();
    assertThat(clusterWide).extracting(ManifestsIT::key).doesNotContainAnyElementsOf(firstNames);
    assertThat(clusterWide)
        .filteredOn(o -> !o.path("kind").asText().equals("StorageClass"))
        .allSatisfy(
            o ->
                assertThat(o.at("/metadata/name").asText()).startsWith("second-standalone-cinder"));
    assertThat(second)
        .filteredOn(o -> !o.at("/metadata/namespace").isMissingNode())
        .allSatisfy(o -> assertThat(o.at("/metadata/namespace").asText()).isEqualTo("team-b"));
    JsonNode webhook =
        only(second, "Deployment standalone-cinder").at("/spec/template/spec/containers/0");
    List<String> args = new ArrayList<>();
    webhook.path("args").forEach(a -> args.add(a.asText()));
    assertThat(args)
        .contains(
            "--webhook-configuration=second-standalone-cinder",
            "--provisioner-name=example.org/second-cinder");
    // The webhook may update only its own release's configurations (the caBundle it writes).
    List<String> configurations = new ArrayList<>();
    for (JsonNode rule :
        only(second, "ClusterRole second-standalone-cinder-webhook").path("rules")) {
      if (rule.path("resources").toString().contains("mutatingwebhookconfigurations")) {
        rule.path("resourceNames").forEach(n -> configurations.add(n.asText()));
      }
    }
    assertThat(configurations).containsExactly("second-standalone-cinder");
    assertThat(only(second, "StorageClass second").path("provisioner").asText())
        .isEqualTo("example.org/second-cinder");
    assertThat(
            only(second, "ConfigMap standalone-cinder-settings")
                .at("/data/PROVISIONER_NAME")
                .asText())
        .isEqualTo("example.org/second-cinder");
  }

  /** Two identities the Go provisioner took at two of its starts. */
  private static final List<String> GO_IDENTITIES =
      List.of("5d0f8a52-0d6e-11e8-9a3b-0242ac110002", "e1c3b7a0-2f44-11e8-8f1a-0242ac110003");

  /**
   * Taking over the Go provisioner's PVs: the chart adds the identities to the settings and exactly
   * the extra right manifests/adopt-go grants, nothing more; without them neither exists.
   */
  @Test
  void adoptingTheGoProvisionersPvsAddsTheSettingAndWhatManifestsAdoptGoHolds() {
    List<JsonNode> plain = RENDERS.get("helm template (required values)");
    List<JsonNode> adopting = RENDERS.get("helm template (adopting the Go provisioner's PVs)");
    List<String> before = plain.stream().map(ManifestsIT::key).toList();
    List<JsonNode> added = adopting.stream().filter(o -> !before.contains(key(o))).toList();
    assertSameObjects(RENDERS.get("kustomize manifests/adopt-go"), added);
    assertThat(
            only(adopting, "ConfigMap standalone-cinder-settings")
                .at("/data/ADOPT_IDENTITIES")
                .asText())
        .isEqualTo(String.join(",", GO_IDENTITIES));
    assertThat(
            only(plain, "ConfigMap standalone-cinder-settings")
                .at("/data/ADOPT_IDENTITIES")
                .isMissingNode())
        .isTrue();
  }

  /**
   * The node component's Pods are no endpoint of any Service of the install: the webhook's Service
   * sends reviews to the Pods its selector matches, and the node component answers none.
   */
  @Test
  void noServiceSelectsTheNodeComponentsPods() {
    List<JsonNode> objects = RENDERS.get("kustomize manifests/node-growth");
    JsonNode pods =
        only(objects, "DaemonSet standalone-cinder-node").at("/spec/template/metadata/labels");
    List<JsonNode> services = objects.stream().filter(o -> key(o).startsWith("Service ")).toList();
    assertThat(services).isNotEmpty();
    for (JsonNode service : services) {
      JsonNode selector = service.at("/spec/selector");
      boolean matches = true;
      for (var it = selector.fields(); it.hasNext(); ) {
        var e = it.next();
        matches &= e.getValue().asText().equals(pods.path(e.getKey()).asText(null));
      }
      assertThat(matches).as(key(service) + " selects " + pods).isFalse();
    }
  }

  /** Every object either form makes carries the app.kubernetes.io labels. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("installs")
  void everyObjectCarriesTheAppLabels(String render) {
    assertThat(RENDERS.get(render))
        .allSatisfy(
            o -> {
              assertThat(o.at("/metadata/labels/app.kubernetes.io~1name").asText())
                  .as(key(o))
                  .isEqualTo("standalone-cinder");
              assertThat(o.at("/metadata/labels/app.kubernetes.io~1part-of").asText())
                  .as(key(o))
                  .isEqualTo("standalone-cinder");
            });
  }

  /**
   * docs/install.md's first way to close the webhook's port, with one value: the webhook mounts the
   * API server's client CA and serves with --client-ca and --client-name, as the overlay
   * dev/node-local/deployment does with a kustomize patch (which DeploymentE2EIT runs).
   */
  @Test
  void aClientCaValueAuthenticatesTheApiServer() throws IOException {
    Map<String, String> set = new LinkedHashMap<>(REQUIRED);
    set.put("webhook.clientCA.configMap", "standalone-cinder-apiserver-client-ca");
    set.put("webhook.clientCA.name", "kube-apiserver-webhook-client");
    JsonNode pod =
        only(objects(template(set, null)), "Deployment standalone-cinder")
            .at("/spec/template/spec");
    JsonNode webhook = pod.at("/containers/0");
    List<String> args = new java.util.ArrayList<>();
    webhook.path("args").forEach(a -> args.add(a.asText()));
    assertThat(args)
        .contains(
            "--client-ca=/etc/standalone-cinder-apiserver-client/ca.crt",
            "--client-name=kube-apiserver-webhook-client");
    assertThat(webhook.path("volumeMounts").toString())
        .contains(
            "{\"name\":\"apiserver-client-ca\",\"mountPath\":\"/etc/standalone-cinder-apiserver-client\","
                + "\"readOnly\":true}");
    assertThat(pod.path("volumes").toString())
        .contains(
            "{\"name\":\"apiserver-client-ca\",\"configMap\":{\"name\":"
                + "\"standalone-cinder-apiserver-client-ca\"}}");
    List<String> without = new java.util.ArrayList<>();
    only(RENDERS.get("helm template (required values)"), "Deployment standalone-cinder")
        .at("/spec/template/spec/containers/0/args")
        .forEach(a -> without.add(a.asText()));
    assertThat(without).noneMatch(a -> a.startsWith("--client-"));
  }

  /**
   * A digest pins the image a Pod runs: a tag can be pushed again by whoever holds the registry.
   */
  @Test
  void aDigestPinsTheImages() throws IOException {
    String digest = "sha256:" + "0123456789abcdef".repeat(4);
    Map<String, String> set = new LinkedHashMap<>(REQUIRED);
    set.put("image.webhook.digest", digest);
    set.put("image.provisioner.digest", digest);
    JsonNode pod =
        only(objects(template(set, null)), "Deployment standalone-cinder")
            .at("/spec/template/spec");
    assertThat(pod.at("/containers/0/image").asText())
        .isEqualTo(REQUIRED.get("image.webhook.repository") + "@" + digest);
    assertThat(pod.at("/containers/1/image").asText())
        .isEqualTo(REQUIRED.get("image.provisioner.repository") + "@" + digest);
  }

  /**
   * examples/options.yaml: each optional value reaches the object it is for, and a single replica
   * gets no PodDisruptionBudget (minAvailable 1 of 1 would block every drain of its node).
   */
  @Test
  void theOptionalValuesReachTheirObjects() {
    List<JsonNode> objects = RENDERS.get("helm template -f examples/options.yaml");
    assertThat(objects).noneMatch(o -> o.path("kind").asText().equals("PodDisruptionBudget"));
    assertThat(RENDERS.get("helm template (required values)"))
        .anyMatch(o -> o.path("kind").asText().equals("PodDisruptionBudget"));
    JsonNode pod = only(objects, "Deployment standalone-cinder").at("/spec/template/spec");
    assertThat(pod.path("securityContext").has("runAsUser")).isFalse();
    assertThat(pod.at("/securityContext/runAsNonRoot").asBoolean()).isTrue();
    JsonNode webhook = pod.at("/containers/0");
    JsonNode provisioner = pod.at("/containers/1");
    assertThat(webhook.path("image").asText())
        .isEqualTo("registry.example/standalone-cinder/webhook:0.1.0");
    assertThat(webhook.path("imagePullPolicy").asText()).isEqualTo("Always");
    assertThat(provisioner.path("args").toString()).isEqualTo("[\"run\",\"--workers=8\"]");
    assertThat(webhook.path("env").findValuesAsText("name"))
        .contains("LOG_FORMAT", "LOG_LEVEL", "HTTPS_PROXY", "NO_PROXY");
    assertThat(webhook.at("/securityContext/readOnlyRootFilesystem").asBoolean()).isTrue();
    for (String config :
        List.of("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")) {
      JsonNode hooks = only(objects, config + " standalone-cinder").path("webhooks");
      assertThat(hooks.findValuesAsText("failurePolicy")).as(config).containsOnly("Ignore");
      for (JsonNode hook : hooks) {
        if (hook.has("namespaceSelector")) {
          assertThat(hook.at("/namespaceSelector/matchExpressions/0/values").toString())
              .as(hook.path("name").asText())
              .isEqualTo("[\"kube-system\",\"standalone-cinder\",\"platform-system\"]");
        }
      }
    }
    // Monitoring: the metrics Service selects the Pods, the ServiceMonitor that Service, and the
    // dashboard is JSON whose every panel queries something.
    JsonNode service = only(objects, "Service standalone-cinder-metrics");
    assertThat(service.at("/spec/selector/app.kubernetes.io~1name").asText())
        .isEqualTo("standalone-cinder");
    JsonNode monitor = only(objects, "ServiceMonitor standalone-cinder");
    assertThat(monitor.at("/spec/selector/matchLabels/app.kubernetes.io~1component").asText())
        .isEqualTo(service.at("/metadata/labels/app.kubernetes.io~1component").asText());
    assertThat(monitor.at("/spec/endpoints/1/tlsConfig/ca/secret/name").asText())
        .isEqualTo("standalone-cinder-webhook-ca");
    assertThat(monitor.at("/metadata/labels/release").asText()).isEqualTo("prometheus");
    assertThat(only(objects, "PrometheusRule standalone-cinder").at("/spec/groups/0/rules"))
        .extracting(r -> r.path("alert").asText())
        .contains("StandaloneCinderNoLeader", "StandaloneCinderCertificateRenewalOverdue");
    JsonNode dashboard = only(objects, "ConfigMap standalone-cinder-dashboard");
    assertThat(dashboard.at("/metadata/labels/grafana_dashboard").asText()).isEqualTo("1");
    JsonNode board;
    try {
      board = JSON.readTree(dashboard.at("/data/standalone-cinder.json").asText());
    } catch (IOException e) {
      throw new AssertionError("the dashboard is not JSON", e);
    }
    assertThat(board.path("panels"))
        .filteredOn(p -> !p.path("type").asText().equals("row"))
        .hasSizeGreaterThan(10)
        .allSatisfy(
            p ->
                assertThat(p.path("targets").findValuesAsText("expr"))
                    .as(p.path("title").asText())
                    .isNotEmpty()
                    .allMatch(e -> e.contains("standalone_cinder_")));
    JsonNode sc = only(objects, "StorageClass cinder-zone-a");
    assertThat(sc.path("mountOptions").toString()).isEqualTo("[\"discard\"]");
    assertThat(sc.at("/allowedTopologies/0/matchLabelExpressions/0/values/0").asText())
        .isEqualTo("zone-a");
    assertThat(
            only(objects, "ConfigMap standalone-cinder-settings").at("/data/LOG_FORMAT").asText())
        .isEqualTo("json");
  }

  /** The same objects, once what only Helm or kustomize add is taken away. */
  private static void assertSameObjects(List<JsonNode> kustomize, List<JsonNode> chart) {
    Map<String, JsonNode> k = normalised(kustomize);
    Map<String, JsonNode> c = normalised(chart);
    // The release's namespace is Helm's to make (helm install --create-namespace).
    k.remove("Namespace standalone-cinder");
    assertThat(c.keySet()).containsExactlyInAnyOrderElementsOf(k.keySet());
    for (String name : k.keySet()) {
      assertThat(c.get(name)).as(name).isEqualTo(k.get(name));
    }
  }

  private static Map<String, JsonNode> normalised(List<JsonNode> objects) {
    Map<String, JsonNode> out = new TreeMap<>();
    for (JsonNode o : objects) {
      ObjectNode n = o.deepCopy();
      strip((ObjectNode) n.path("metadata"));
      if (n.at("/spec/template/metadata") instanceof ObjectNode pod) {
        strip(pod);
      }
      if (key(n).equals("ConfigMap standalone-cinder-webhook-policy")) {
        // The same policy: comments and layout aside.
        try {
          ((ObjectNode) n.get("data"))
              .set("policy.yaml", YAML.readTree(n.at("/data/policy.yaml").asText()));
        } catch (IOException e) {
          throw new AssertionError(e);
        }
      }
      out.put(key(unhashed(n)), n);
    }
    return out;
  }

  private static final List<String> HELM_LABELS =
      List.of(
          "helm.sh/chart",
          "app.kubernetes.io/managed-by",
          "app.kubernetes.io/instance",
          "app.kubernetes.io/version");

  private static void strip(ObjectNode meta) {
    if (meta.get("labels") instanceof ObjectNode labels) {
      labels.remove(HELM_LABELS);
      if (labels.isEmpty()) {
        meta.remove("labels");
      }
    }
    if (meta.get("annotations") instanceof ObjectNode annotations) {
      annotations.remove("checksum/config");
      if (annotations.isEmpty()) {
        meta.remove("annotations");
      }
    }
  }

  /** kustomize's generated ConfigMap name ends in a hash of its data: dropped, everywhere. */
  private static JsonNode unhashed(JsonNode n) {
    if (n instanceof ObjectNode o) {
      for (Iterator<Map.Entry<String, JsonNode>> it = o.fields(); it.hasNext(); ) {
        var e = it.next();
        if (e.getValue().isTextual()) {
          e.setValue(
              new TextNode(
                  e.getValue()
                      .asText()
                      .replaceAll("^(standalone-cinder-settings)-[a-z0-9]{10}$", "$1")));
        } else {
          unhashed(e.getValue());
        }
      }
    } else if (n instanceof ArrayNode a) {
      a.forEach(ManifestsIT::unhashed);
    }
    return n;
  }
}
