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
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
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
    defaults.env = java.util.Map.of();
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
    assertThat(cc.getService().getName()).isEqualTo(defaults.options().service());
    assertThat(cc.getService().getNamespace()).isEqualTo(defaults.options().namespace());
    assertThat(cc.getService().getPath()).isEqualTo(path);
    assertThat(cc.getService().getPort()).isEqualTo(svc.getSpec().getPorts().get(0).getPort());
    assertThat(cc.getCaBundle()).as("written by the webhook").isNull();
  }

  @Test
  void theConfigurationsCallOurServiceWithoutSideEffectsAndFailClosedOnlyOnClaimCreation() {
    MutatingWebhookConfiguration m = one(MutatingWebhookConfiguration.class);
    ValidatingWebhookConfiguration v = one(ValidatingWebhookConfiguration.class);
    assertThat(m.getMetadata().getName()).isEqualTo(defaults.options().webhookConfiguration());
    assertThat(v.getMetadata().getName()).isEqualTo(defaults.options().webhookConfiguration());
    // entry -> failurePolicy, operations, whether kube-system and our namespace are left out
    java.util.Map<String, String> expected =
        java.util.Map.of(
            "mutate claims.webhook.standalone-cinder.io", "Fail [CREATE] scoped",
            "mutate storageclasses.webhook.standalone-cinder.io", "Ignore [CREATE] cluster",
            "validate claims.webhook.standalone-cinder.io", "Fail [CREATE] scoped",
            // The PV controller's binds and finalizer removals are updates: never blocked.
            "validate claim-updates.webhook.standalone-cinder.io", "Ignore [UPDATE] scoped",
            "validate storageclasses.webhook.standalone-cinder.io",
                "Ignore [CREATE, UPDATE] cluster",
            // Early word on clone templates; never in the way.
            "validate statefulsets.webhook.standalone-cinder.io", "Ignore [CREATE] scoped");
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
                                .equals(
                                    java.util.List.of(
                                        "kube-system", defaults.options().namespace())));
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
    serve.env = java.util.Map.of();
    new CommandLine(serve)
        .parseArgs(c.getArgs().subList(1, c.getArgs().size()).toArray(String[]::new));
    assertThat(c.getArgs().get(0)).isEqualTo("serve");
    assertThat(serve.problems()).isEmpty();
    assertThat(c.getPorts().get(0).getContainerPort()).isEqualTo(defaults.options().port());
    assertThat(c.getReadinessProbe().getHttpGet().getScheme()).isEqualTo("HTTPS");
    assertThat(c.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
    var mount =
        c.getVolumeMounts().stream().filter(vm -> vm.getName().equals("policy")).findFirst();
    assertThat(serve.options().policyFile().getParent().toString())
        .isEqualTo(mount.get().getMountPath());

    // The provisioner container serves the clone check: on loopback at its default port, with
    // the token file both containers share.
    var resolver =
        d.getSpec().getTemplate().getSpec().getContainers().stream()
            .filter(x -> x.getName().equals("provisioner"))
            .findFirst()
            .orElseThrow();
    assertThat(resolver.getArgs()).containsExactly("run");
    assertThat(serve.options().resolver().getHost()).isEqualTo("127.0.0.1");
    assertThat(serve.options().resolver().getPort()).isEqualTo(8090);
    assertThat(resolver.getEnv())
        .anySatisfy(
            e -> {
              assertThat(e.getName()).isEqualTo("RESOLVER_TOKEN_FILE");
              assertThat(e.getValue()).isEqualTo(serve.options().resolverTokenFile().toString());
            });
    // The user the webhook lets write the provisioner's annotations: the Pod's own account.
    assertThat(serve.options().provisionerUser())
        .isEqualTo(
            "system:serviceaccount:"
                + d.getMetadata().getNamespace()
                + ":"
                + d.getSpec().getTemplate().getSpec().getServiceAccountName());
    String tokenDir = serve.options().resolverTokenFile().getParent().toString();
    assertThat(c.getVolumeMounts()).anyMatch(m -> m.getMountPath().equals(tokenDir));
    assertThat(resolver.getVolumeMounts()).anyMatch(m -> m.getMountPath().equals(tokenDir));

    ConfigMap policy =
        OBJECTS.stream()
            .filter(ConfigMap.class::isInstance)
            .map(ConfigMap.class::cast)
            .filter(m -> m.getMetadata().getName().equals("standalone-cinder-webhook-policy"))
            .findFirst()
            .orElseThrow();
    assertThat(
            PolicyConfig.parse(
                policy.getData().get(serve.options().policyFile().getFileName().toString())))
        .isEqualTo(PolicyConfig.DEFAULTS);
  }

  @Test
  void theWebhookHasItsOwnAccountWithWhatItDoesAndNoMore() {
    // Every grant of the webhook's account, cluster-wide and in its namespace, as one table:
    // reads for the rules (ReferenceGrants listed), SubjectAccessReviews, our configurations'
    // caBundle, its two Secrets.
    java.util.Set<String> expected =
        java.util.Set.of(
            "cluster get persistentvolumeclaims",
            "cluster get persistentvolumes",
            "cluster get storageclasses",
            "cluster get namespaces",
            "cluster list referencegrants",
            "cluster create subjectaccessreviews",
            "cluster get mutatingwebhookconfigurations ["
                + defaults.options().webhookConfiguration()
                + "]",
            "cluster update mutatingwebhookconfigurations ["
                + defaults.options().webhookConfiguration()
                + "]",
            "cluster get validatingwebhookconfigurations ["
                + defaults.options().webhookConfiguration()
                + "]",
            "cluster update validatingwebhookconfigurations ["
                + defaults.options().webhookConfiguration()
                + "]",
            "namespace create secrets",
            "namespace get secrets [" + defaults.options().caSecret() + "]",
            "namespace get secrets [" + org.standalonecinder.api.CloneToken.KEY_SECRET + "]",
            "namespace update secrets [" + defaults.options().caSecret() + "]");
    String account = "standalone-cinder-webhook";
    java.util.Set<String> granted = new java.util.TreeSet<>();
    OBJECTS.stream()
        .filter(ClusterRoleBinding.class::isInstance)
        .map(ClusterRoleBinding.class::cast)
        .filter(b -> b.getSubjects().stream().anyMatch(x -> x.getName().equals(account)))
        .forEach(b -> granted.addAll(grants("cluster", clusterRole(b.getRoleRef().getName()))));
    OBJECTS.stream()
        .filter(RoleBinding.class::isInstance)
        .map(RoleBinding.class::cast)
        .filter(b -> b.getSubjects().stream().anyMatch(x -> x.getName().equals(account)))
        .forEach(b -> granted.addAll(grants("namespace", role(b.getRoleRef().getName()))));
    assertThat(granted).isEqualTo(new java.util.TreeSet<>(expected));

    // The webhook container mounts its own account's token, never the Pod's (the provisioner's).
    var pod = one(Deployment.class).getSpec().getTemplate().getSpec();
    assertThat(pod.getAutomountServiceAccountToken()).isFalse();
    var webhook =
        pod.getContainers().stream().filter(c -> c.getName().equals("webhook")).findFirst().get();
    var mount =
        webhook.getVolumeMounts().stream()
            .filter(m -> m.getMountPath().equals("/var/run/secrets/kubernetes.io/serviceaccount"))
            .findFirst()
            .orElseThrow();
    var volume =
        pod.getVolumes().stream()
            .filter(v -> v.getName().equals(mount.getName()))
            .findFirst()
            .orElseThrow();
    io.fabric8.kubernetes.api.model.Secret token =
        OBJECTS.stream()
            .filter(io.fabric8.kubernetes.api.model.Secret.class::isInstance)
            .map(io.fabric8.kubernetes.api.model.Secret.class::cast)
            .filter(x -> x.getMetadata().getName().equals(volume.getSecret().getSecretName()))
            .findFirst()
            .orElseThrow();
    assertThat(token.getType()).isEqualTo("kubernetes.io/service-account-token");
    assertThat(token.getMetadata().getAnnotations())
        .containsEntry("kubernetes.io/service-account.name", account);
  }

  private static ClusterRole clusterRole(String name) {
    return OBJECTS.stream()
        .filter(ClusterRole.class::isInstance)
        .map(ClusterRole.class::cast)
        .filter(r -> r.getMetadata().getName().equals(name))
        .findFirst()
        .orElseThrow();
  }

  private static Role role(String name) {
    return OBJECTS.stream()
        .filter(Role.class::isInstance)
        .map(Role.class::cast)
        .filter(r -> r.getMetadata().getName().equals(name))
        .findFirst()
        .orElseThrow();
  }

  private static List<String> grants(String scope, ClusterRole r) {
    return grants(scope, r.getRules());
  }

  private static List<String> grants(String scope, Role r) {
    return grants(scope, r.getRules());
  }

  private static List<String> grants(String scope, List<PolicyRule> rules) {
    List<String> out = new java.util.ArrayList<>();
    for (PolicyRule r : rules) {
      for (String res : r.getResources()) {
        for (String v : r.getVerbs()) {
          if (r.getResourceNames() == null || r.getResourceNames().isEmpty()) {
            out.add(scope + " " + v + " " + res);
          } else {
            for (String n : r.getResourceNames()) {
              out.add(scope + " " + v + " " + res + " [" + n + "]");
            }
          }
        }
      }
    }
    return out;
  }
}
