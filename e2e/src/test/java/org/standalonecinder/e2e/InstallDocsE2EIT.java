package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.standalonecinder.demo.LocalInstall;

/**
 * docs/install.md as a newcomer follows it: every {@code sh} block of a section marked
 * <i>(tested)</i> runs, as written and in the page's order, in bash from a copy of this checkout
 * against the real API server, as its admin. After each section the cluster holds what the page
 * says. Two stand-ins, both said on the page: {@code helm} is Helm's library ({@link HelmShim}: no
 * Helm binary here), and {@code kubectl} is the real one except that {@code rollout status} returns
 * at once (no kubelet runs a Pod here) and 1.20's unknown {@code policy/v1} PodDisruptionBudget is
 * the one error let through. Runs before the suite's installation, which uses the same names, and
 * leaves the cluster as it found it.
 */
@Order(-1)
class InstallDocsE2EIT {

  private static final Path ROOT = Path.of(System.getProperty("project.root", "..")).normalize();

  @TempDir Path copy;

  /** Everything either install path (or the suite's own installation) makes, deleted. */
  private static final String CLEAN_UP =
      String.join(
          "\n",
          "helm uninstall standalone-cinder --namespace standalone-cinder >/dev/null 2>&1 || true",
          "\"$REAL_KUBECTL\" delete -k manifests/base --ignore-not-found --wait >/dev/null 2>&1 || true",
          "\"$REAL_KUBECTL\" delete namespace standalone-cinder --ignore-not-found --wait >/dev/null",
          "\"$REAL_KUBECTL\" delete storageclass cinder --ignore-not-found >/dev/null",
          "\"$REAL_KUBECTL\" delete pv "
              + InstallDocsE2EIT.LEFT_PV
              + " --ignore-not-found >/dev/null");

  /** A PV the installation made and an uninstall leaves, and the CHAP Secret it names. */
  static final String LEFT_PV = "e2e-install-docs-left-behind";

  static final String LEFT_SECRET = "chap-" + LEFT_PV;

  /** The sections of the page that run, in order, with their commands. */
  static Map<String, List<String>> testedSections(String markdown) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    String section = null;
    StringBuilder block = null;
    for (String line : markdown.split("\n", -1)) {
      if (block != null) {
        if (line.equals("```")) {
          if (section != null) {
            out.computeIfAbsent(section, k -> new ArrayList<>()).add(block.toString());
          }
          block = null;
        } else {
          block.append(line).append('\n');
        }
      } else if (line.startsWith("#")) {
        section =
            line.contains("*(tested)*") ? line.replaceAll("^#+ |\\s*\\*\\(tested\\)\\*", "") : null;
      } else if (line.equals("```sh")) {
        block = new StringBuilder();
      }
    }
    return out;
  }

  @Test
  void theInstallPagesCommandsRunAsWrittenAgainstTheRealApiServer() throws Exception {
    Map<String, String> kube =
        LocalInstall.env(
            Path.of(System.getProperty("kube.local.env", "/tmp/kube-local/kube-local.env")));
    Path kubeconfig = Path.of(kube.get("KUBE_LOCAL_KUBECONFIG"));
    for (String dir : List.of("manifests", "charts")) {
      copyTree(ROOT.resolve(dir), copy.resolve(dir));
    }
    // What the page asks the reader to bring: the CA of the API server's webhook client
    // certificate (dev/kube-local makes one, CN kube-apiserver-webhook-client).
    Files.copy(
        Path.of(kube.get("KUBE_LOCAL_WEBHOOK_CLIENT_CA")), copy.resolve("apiserver-client-ca.crt"));
    Path bin = Files.createDirectories(copy.resolve(".bin"));
    script(
        bin.resolve("kubectl"),
        """
        #!/usr/bin/env bash
        # No Pod of the project starts here (the node's kubelet takes only the pods that tolerate
        # its taint, and has no image of the project): there is no rollout to wait for.
        case " $* " in *" rollout status "*) echo "(kube-local: no node runs the project's pods, not waiting: kubectl $*)"; exit 0 ;; esac
        err=$(mktemp)
        "$REAL_KUBECTL" "$@" 2>"$err"; rc=$?
        # Kubernetes 1.20 serves PodDisruptionBudget as policy/v1beta1 only: the one error let through.
        if [ $rc -ne 0 ] && grep -q 'no matches for kind "PodDisruptionBudget" in version "policy/v1"' "$err" \\
            && ! grep -i '^error' "$err" | grep -v 'PodDisruptionBudget' | grep -q .; then
          echo "(kube-local 1.20: no policy/v1 PodDisruptionBudget)" >&2; rc=0
        fi
        cat "$err" >&2; rm -f "$err"; exit $rc
        """);
    script(
        bin.resolve("helm"),
        """
        #!/usr/bin/env bash
        exec "$SHIM_JAVA" -cp "$SHIM_CLASSPATH" org.standalonecinder.e2e.HelmShim "$@"
        """);
    Map<String, List<String>> sections =
        testedSections(Files.readString(ROOT.resolve("docs/install.md")));
    assertThat(sections.keySet())
        .containsExactly(
            "2. The cloud's configuration",
            "3. Install with kustomize",
            "Upgrade (kustomize)",
            "Uninstall (kustomize)",
            "4. Install with Helm",
            "Verify the install",
            "The API server authenticates to the webhook (Helm)",
            "Change the cloud.conf",
            "Take the webhook out of the path in an emergency",
            "Put the webhook back",
            "Upgrade (Helm)",
            "Uninstall (Helm)",
            "Removing the namespace");
    Config c = Config.fromKubeconfig(null, Files.readString(kubeconfig), kubeconfig.toString());
    try (KubernetesClient admin = new KubernetesClientBuilder().withConfig(c).build()) {
      Map<String, java.util.function.BiConsumer<KubernetesClient, String>> after = checks();
      // As on a new cluster: what the demo or an earlier run installed goes first.
      run("clean slate", CLEAN_UP, bin, kube.get("KUBE_LOCAL_KUBECTL"), kubeconfig);
      try {
        for (var section : sections.entrySet()) {
          if (section.getKey().equals("Uninstall (kustomize)")) {
            leaveAPv(admin);
          }
          StringBuilder out = new StringBuilder();
          for (String commands : section.getValue()) {
            out.append(
                run(section.getKey(), commands, bin, kube.get("KUBE_LOCAL_KUBECTL"), kubeconfig));
          }
          after.getOrDefault(section.getKey(), (k, o) -> {}).accept(admin, out.toString());
        }
      } finally {
        // A failed run must not leave objects of the suite's names behind.
        run("clean-up", CLEAN_UP, bin, kube.get("KUBE_LOCAL_KUBECTL"), kubeconfig);
      }
    }
  }

  /**
   * What an installation leaves when its claims are not all deleted first: a PV (Retain, or whose
   * claim outlives the uninstall) that names a CHAP Secret in the project's namespace. Its pods
   * need that Secret at their next mount, so no uninstall may take it.
   */
  private static void leaveAPv(KubernetesClient k) {
    k.secrets()
        .inNamespace(LocalInstall.NS)
        .resource(
            new io.fabric8.kubernetes.api.model.SecretBuilder()
                .withNewMetadata()
                .withName(LEFT_SECRET)
                .endMetadata()
                .withType("kubernetes.io/iscsi-chap")
                .addToStringData("node.session.auth.username", "user")
                .addToStringData("node.session.auth.password", "not-a-real-one")
                .build())
        .create();
    k.persistentVolumes()
        .resource(
            new io.fabric8.kubernetes.api.model.PersistentVolumeBuilder()
                .withNewMetadata()
                .withName(LEFT_PV)
                .endMetadata()
                .withNewSpec()
                .withCapacity(
                    Map.of("storage", new io.fabric8.kubernetes.api.model.Quantity("1Gi")))
                .withAccessModes("ReadWriteOnce")
                .withPersistentVolumeReclaimPolicy("Retain")
                .withNewIscsi()
                .withTargetPortal("127.0.0.1:3260")
                .withIqn("iqn.2010-10.org.openstack:volume-left-behind")
                .withLun(1)
                .withChapAuthSession(true)
                .withNewSecretRef()
                .withName(LEFT_SECRET)
                .withNamespace(LocalInstall.NS)
                .endSecretRef()
                .endIscsi()
                .endSpec()
                .build())
        .create();
  }

  /** The Pod template of the install's Deployment, as the API server holds it. */
  private static io.fabric8.kubernetes.api.model.PodTemplateSpec podTemplate(
      KubernetesClient k, String ns) {
    return k.apps()
        .deployments()
        .inNamespace(ns)
        .withName("standalone-cinder")
        .get()
        .getSpec()
        .getTemplate();
  }

  /** Which of the project's two webhook configurations exist. */
  private static List<String> webhookConfigurations(KubernetesClient k) {
    var v1 = k.admissionRegistration().v1();
    List<String> out = new ArrayList<>();
    if (v1.mutatingWebhookConfigurations().withName("standalone-cinder").get() != null) {
      out.add("mutating");
    }
    if (v1.validatingWebhookConfigurations().withName("standalone-cinder").get() != null) {
      out.add("validating");
    }
    return out;
  }

  private static void theLeftPvsSecretRemains(KubernetesClient k) {
    assertThat(k.namespaces().withName(LocalInstall.NS).get()).isNotNull();
    assertThat(k.secrets().inNamespace(LocalInstall.NS).withName(LEFT_SECRET).get())
        .as("the CHAP Secret a remaining PV names")
        .isNotNull();
  }

  /** What the cluster holds after each section, and what its commands printed. */
  private static Map<String, java.util.function.BiConsumer<KubernetesClient, String>> checks() {
    String ns = LocalInstall.NS;
    Map<String, java.util.function.BiConsumer<KubernetesClient, String>> more =
        new java.util.HashMap<>(checksOfTheMainPath(ns));
    more.put(
        "The API server authenticates to the webhook (Helm)",
        (k, out) -> {
          var webhook = podTemplate(k, ns).getSpec().getContainers().get(0);
          assertThat(webhook.getArgs())
              .contains(
                  "--client-ca=/etc/standalone-cinder-apiserver-client/ca.crt",
                  "--client-name=kube-apiserver-webhook-client");
          assertThat(
                  k.configMaps()
                      .inNamespace(ns)
                      .withName("standalone-cinder-apiserver-client-ca")
                      .get()
                      .getData())
              .containsKey("ca.crt");
        });
    return more;
  }

  private static Map<String, java.util.function.BiConsumer<KubernetesClient, String>>
      checksOfTheMainPath(String ns) {
    return Map.of(
        "3. Install with kustomize",
        (k, out) -> {
          var d = k.apps().deployments().inNamespace(ns).withName("standalone-cinder").get();
          assertThat(d.getSpec().getReplicas()).isEqualTo(2);
          assertThat(d.getSpec().getTemplate().getSpec().getContainers())
              .extracting(x -> x.getName())
              .containsExactly("webhook", "provisioner");
          var settings =
              k.configMaps().inNamespace(ns).list().getItems().stream()
                  .filter(m -> m.getMetadata().getName().startsWith("standalone-cinder-settings"))
                  .findFirst()
                  .orElseThrow();
          assertThat(settings.getData())
              .containsEntry("CLUSTER_ID", "prod-1")
              .containsEntry("INITIATOR_NAME", "iqn.2026-11.org.example:prod-1");
          assertThat(k.secrets().inNamespace(ns).withName("standalone-cinder-cloud-config").get())
              .isNotNull();
          assertThat(
                  k.admissionRegistration()
                      .v1()
                      .mutatingWebhookConfigurations()
                      .withName("standalone-cinder")
                      .get())
              .isNotNull();
        },
        "Uninstall (kustomize)",
        (k, out) -> {
          assertThat(k.rbac().clusterRoles().withName("standalone-cinder").get()).isNull();
          assertThat(k.apps().deployments().inNamespace(ns).withName("standalone-cinder").get())
              .isNull();
          theLeftPvsSecretRemains(k);
        },
        "4. Install with Helm",
        (k, out) -> {
          assertThat(k.apps().deployments().inNamespace(ns).withName("standalone-cinder").get())
              .isNotNull();
          assertThat(k.storage().v1().storageClasses().withName("cinder").get().getProvisioner())
              .isEqualTo("openstack.org/standalone-cinder");
          assertThat(
                  k.configMaps()
                      .inNamespace(ns)
                      .withName("standalone-cinder-settings")
                      .get()
                      .getData())
              .containsEntry("CLUSTER_ID", "prod-1");
          // 1.20: the chart chose the PodDisruptionBudget's version the cluster serves.
          assertThat(
                  k.policy()
                      .v1beta1()
                      .podDisruptionBudget()
                      .inNamespace(ns)
                      .withName("standalone-cinder")
                      .get())
              .isNotNull();
        },
        "Verify the install",
        (k, out) ->
            assertThat(out.lines().map(String::strip))
                .contains(
                    "claims.webhook.standalone-cinder.io storageclasses.webhook.standalone-cinder.io",
                    "yes",
                    "no"),
        "Change the cloud.conf",
        (k, out) -> {
          var secret = k.secrets().inNamespace(ns).withName("standalone-cinder-cloud-config").get();
          assertThat(
                  new String(
                      java.util.Base64.getDecoder().decode(secret.getData().get("cloud.conf")),
                      StandardCharsets.UTF_8))
              .contains("[BlockStorage]\nrequest-timeout = 120");
          assertThat(podTemplate(k, ns).getMetadata().getAnnotations())
              .containsKey("kubectl.kubernetes.io/restartedAt");
        },
        "Take the webhook out of the path in an emergency",
        (k, out) -> assertThat(webhookConfigurations(k)).isEmpty(),
        "Put the webhook back",
        (k, out) -> assertThat(webhookConfigurations(k)).containsExactly("mutating", "validating"),
        "Upgrade (Helm)",
        (k, out) ->
            assertThat(
                    k.configMaps()
                        .inNamespace(ns)
                        .withName("standalone-cinder-webhook-policy")
                        .get()
                        .getData()
                        .get("policy.yaml"))
                .contains("mode: audit"),
        "Uninstall (Helm)",
        (k, out) -> {
          theLeftPvsSecretRemains(k);
          assertThat(k.storage().v1().storageClasses().withName("cinder").get()).isNull();
          assertThat(webhookConfigurations(k)).isEmpty();
        },
        "Removing the namespace",
        (k, out) -> assertThat(out.lines().map(String::strip)).contains(LEFT_PV));
  }

  private String run(String section, String commands, Path bin, String kubectl, Path kubeconfig)
      throws IOException, InterruptedException {
    ProcessBuilder pb =
        new ProcessBuilder("bash", "-euo", "pipefail", "-c", commands)
            .directory(copy.toFile())
            .redirectErrorStream(true);
    Map<String, String> env = pb.environment();
    env.put("PATH", bin + ":" + env.get("PATH"));
    env.put("KUBECONFIG", kubeconfig.toString());
    env.put("REAL_KUBECTL", kubectl);
    env.put("SHIM_JAVA", ProcessHandle.current().info().command().orElse("java"));
    env.put("SHIM_CLASSPATH", System.getProperty("java.class.path"));
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(300, TimeUnit.SECONDS)).as(section).isTrue();
    System.out.printf("install.md, %s:%n%s%n", section, out.indent(2));
    assertThat(p.exitValue()).as(section + ":\n" + commands + "\n" + out).isZero();
    return out;
  }

  private static void script(Path file, String text) throws IOException {
    Files.writeString(file, text);
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (var paths = Files.walk(from)) {
      for (Path p : paths.toList()) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target);
        }
      }
    }
  }
}
