package org.standalonecinder.webhook.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.WebhookClientConfig;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.standalonecinder.webhook.policy.PolicyConfig;
import picocli.CommandLine;

/**
 * manifests/base agrees with the webhook's code: names the server defaults to, the paths it serves,
 * the entries whose caBundle it writes, the permissions it needs, the clone check it asks the
 * provisioner container for, and a policy that parses. (That every call is granted, and no more, is
 * RbacAuditE2EIT's, against the real API server.)
 */
class WebhookManifestsTest {

  private static final Path DIR = Path.of("..", "manifests", "base");
  private static final List<HasMetadata> OBJECTS = new ArrayList<>();
  private static ServeCommand defaults;

  @BeforeAll
  static void load() throws Exception {
    KubernetesSerialization s = new KubernetesSerialization();
    try (var files = Files.list(DIR)) {
      for (Path p : files.filter(f -> f.toString().endsWith(".yaml")).toList()) {
        if (p.endsWith("kustomization.yaml")) {
          continue;
        }
        for (String doc : Files.readString(p).split("(?m)^---\\s*$")) {
          if (doc.lines().anyMatch(l -> !l.isBlank() && !l.startsWith("#"))) {
            OBJECTS.add(s.unmarshal(doc));
          }
        }
      }
    }
    defaults = new ServeCommand();
    new CommandLine(defaults).parseArgs();
  }

  private static <T> T one(Class<T> type) {
    List<T> found = OBJECTS.stream().filter(type::isInstance).map(type::cast).toList();
    assertThat(found).as(type.getSimpleName()).hasSize(1);
    return found.get(0);
  }

  private static void servedByUs(String entry, WebhookClientConfig cc, String path) {
    assertThat(entry).endsWith(WebhookApp.ENTRY_SUFFIX);
    Service svc = one(Service.class);
    assertThat(cc.getService().getName()).isEqualTo(svc.getMetadata().getName());
    assertThat(cc.getService().getName()).isEqualTo(defaults.service);
    assertThat(cc.getService().getNamespace()).isEqualTo(defaults.namespace);
    assertThat(cc.getService().getPath()).isEqualTo(path);
    assertThat(cc.getService().getPort()).isEqualTo(svc.getSpec().getPorts().get(0).getPort());
    assertThat(cc.getCaBundle()).as("written by the webhook").isNull();
  }

  @Test
  void theConfigurationsCallOurServiceWithoutSideEffectsAndFailClosedOnlyOnClaimCreation() {
    MutatingWebhookConfiguration m = one(MutatingWebhookConfiguration.class);
    ValidatingWebhookConfiguration v = one(ValidatingWebhookConfiguration.class);
    assertThat(m.getMetadata().getName()).isEqualTo(defaults.webhookConfiguration);
    assertThat(v.getMetadata().getName()).isEqualTo(defaults.webhookConfiguration);
    // entry -> failurePolicy, operations, whether kube-system and our namespace are left out
    java.util.Map<String, String> expected =
        java.util.Map.of(
            "mutate claims.webhook.standalone-cinder.io", "Fail [CREATE] scoped",
            "mutate storageclasses.webhook.standalone-cinder.io", "Ignore [CREATE] cluster",
            "validate claims.webhook.standalone-cinder.io", "Fail [CREATE] scoped",
            // The PV controller's binds and finalizer removals are updates: never blocked.
            "validate claim-updates.webhook.standalone-cinder.io", "Ignore [UPDATE] scoped",
            "validate storageclasses.webhook.standalone-cinder.io",
                "Ignore [CREATE, UPDATE] cluster");
    java.util.Map<String, String> actual = new java.util.TreeMap<>();
    m.getWebhooks()
        .forEach(
            w -> {
              servedByUs(w.getName(), w.getClientConfig(), "/mutate");
              assertThat(w.getSideEffects()).isEqualTo("None");
              assertThat(w.getTimeoutSeconds()).isLessThanOrEqualTo(10);
              assertThat(w.getAdmissionReviewVersions()).contains("v1");
              actual.put(
                  "mutate " + w.getName(),
                  scope(w.getFailurePolicy(), w.getRules(), w.getNamespaceSelector()));
            });
    v.getWebhooks()
        .forEach(
            w -> {
              servedByUs(w.getName(), w.getClientConfig(), "/validate");
              assertThat(w.getSideEffects()).isEqualTo("None");
              assertThat(w.getTimeoutSeconds()).isLessThanOrEqualTo(10);
              actual.put(
                  "validate " + w.getName(),
                  scope(w.getFailurePolicy(), w.getRules(), w.getNamespaceSelector()));
            });
    assertThat(actual).isEqualTo(new java.util.TreeMap<>(expected));
  }

  private String scope(
      String failurePolicy,
      java.util.List<io.fabric8.kubernetes.api.model.admissionregistration.v1.RuleWithOperations>
          rules,
      io.fabric8.kubernetes.api.model.LabelSelector namespaces) {
    boolean scoped =
        namespaces != null
            && namespaces.getMatchExpressions().stream()
                .anyMatch(
                    e ->
                        e.getKey().equals("kubernetes.io/metadata.name")
                            && e.getOperator().equals("NotIn")
                            && e.getValues()
                                .equals(java.util.List.of("kube-system", defaults.namespace)));
    return failurePolicy
        + " "
        + rules.get(0).getOperations()
        + " "
        + (scoped ? "scoped" : namespaces == null ? "cluster" : "other: " + namespaces);
  }

  @Test
  void theDeploymentRunsServeWithItsPolicyAndProbesOverHttps() {
    Deployment d = one(Deployment.class);
    assertThat(d.getSpec().getReplicas()).isGreaterThanOrEqualTo(2);
    var c =
        d.getSpec().getTemplate().getSpec().getContainers().stream()
            .filter(x -> x.getName().equals("webhook"))
            .findFirst()
            .orElseThrow();
    ServeCommand serve = new ServeCommand();
    new CommandLine(serve)
        .parseArgs(c.getArgs().subList(1, c.getArgs().size()).toArray(String[]::new));
    assertThat(c.getArgs().get(0)).isEqualTo("serve");
    assertThat(serve.problems()).isEmpty();
    assertThat(c.getPorts().get(0).getContainerPort()).isEqualTo(defaults.port);
    assertThat(c.getReadinessProbe().getHttpGet().getScheme()).isEqualTo("HTTPS");
    assertThat(c.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
    var mount =
        c.getVolumeMounts().stream().filter(vm -> vm.getName().equals("policy")).findFirst();
    assertThat(serve.policyFile.getParent().toString()).isEqualTo(mount.get().getMountPath());

    // The provisioner container serves the clone check: on loopback at its default port, with
    // the token file both containers share.
    var resolver =
        d.getSpec().getTemplate().getSpec().getContainers().stream()
            .filter(x -> x.getName().equals("provisioner"))
            .findFirst()
            .orElseThrow();
    assertThat(resolver.getArgs()).containsExactly("run");
    assertThat(java.net.URI.create(serve.resolver).getHost()).isEqualTo("127.0.0.1");
    assertThat(java.net.URI.create(serve.resolver).getPort()).isEqualTo(8090);
    assertThat(resolver.getEnv())
        .anySatisfy(
            e -> {
              assertThat(e.getName()).isEqualTo("RESOLVER_TOKEN_FILE");
              assertThat(e.getValue()).isEqualTo(serve.resolverTokenFile.toString());
            });
    // The user the webhook lets write the provisioner's annotations: the Pod's own account.
    assertThat(serve.options().provisionerUser())
        .isEqualTo(
            "system:serviceaccount:"
                + d.getMetadata().getNamespace()
                + ":"
                + d.getSpec().getTemplate().getSpec().getServiceAccountName());
    String tokenDir = serve.resolverTokenFile.getParent().toString();
    assertThat(c.getVolumeMounts()).anyMatch(m -> m.getMountPath().equals(tokenDir));
    assertThat(resolver.getVolumeMounts()).anyMatch(m -> m.getMountPath().equals(tokenDir));

    ConfigMap policy =
        OBJECTS.stream()
            .filter(ConfigMap.class::isInstance)
            .map(ConfigMap.class::cast)
            .filter(m -> m.getMetadata().getName().equals("standalone-cinder-webhook-policy"))
            .findFirst()
            .orElseThrow();
    assertThat(PolicyConfig.parse(policy.getData().get(serve.policyFile.getFileName().toString())))
        .isEqualTo(PolicyConfig.DEFAULTS);
  }

  @Test
  void thePermissionsAreWhatTheWebhookDoesAndNoMore() {
    List<PolicyRule> cluster = one(ClusterRole.class).getRules();
    assertThat(cluster)
        .anySatisfy(
            r -> {
              assertThat(r.getResources()).containsExactly("subjectaccessreviews");
              assertThat(r.getVerbs()).containsExactly("create");
            });
    assertThat(cluster)
        .anySatisfy(
            r -> {
              assertThat(r.getResources()).contains("mutatingwebhookconfigurations");
              assertThat(r.getResourceNames()).containsExactly(defaults.webhookConfiguration);
            });
    assertThat(cluster).allSatisfy(r -> assertThat(r.getVerbs()).doesNotContain("*"));
    assertThat(cluster)
        .as("no Secret outside the namespace")
        .allSatisfy(r -> assertThat(r.getResources()).doesNotContain("secrets"));
    List<PolicyRule> own = one(Role.class).getRules();
    assertThat(own)
        .anySatisfy(
            r -> {
              assertThat(r.getResourceNames())
                  .containsExactlyInAnyOrder(
                      defaults.caSecret, org.standalonecinder.api.CloneToken.KEY_SECRET);
              assertThat(r.getVerbs()).containsExactly("update");
            });
  }
}
