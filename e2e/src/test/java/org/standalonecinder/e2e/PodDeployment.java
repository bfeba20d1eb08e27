package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhook;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhook;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.standalonecinder.demo.Kubectl;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.LocalNode;
import org.standalonecinder.demo.Pods;
import org.standalonecinder.demo.Waits;

/**
 * The project's Deployment as a user installs it, on the first node: the images imported into its
 * containerd, manifests/base applied with the local overlay, the Pod waited for and judged from
 * outside (the kubelet's view, the audit log), and everything removed again.
 */
final class PodDeployment {

  static final String NS = "standalone-cinder";
  static final String OVERLAY = "dev/node-local/deployment";

  /** The node's forward that the overlay's webhook URL goes through (dev/test.sh starts it). */
  static final String FORWARD = "18443:8443";

  static final List<String> IMAGES = List.of("webhook", "provisioner");
  static final Duration READY = Duration.ofSeconds(300);

  /** Twice the liveness probe's period (manifests/base), and a little. */
  static final Duration TWO_LIVENESS_PERIODS = Duration.ofSeconds(45);

  private final Path root;
  private final Map<String, String> kube;
  private final KubernetesClient admin;
  private final Kubectl kubectl;
  private final LocalNode node;
  private final Path nodeEnv;
  private final List<String> seenPods = new ArrayList<>();

  PodDeployment(
      Path root,
      Map<String, String> kube,
      KubernetesClient admin,
      Kubectl kubectl,
      LocalNode node,
      Path nodeEnv) {
    this.root = root;
    this.kube = kube;
    this.admin = admin;
    this.kubectl = kubectl;
    this.node = node;
    this.nodeEnv = nodeEnv;
  }

  /**
   * Waits for dev/test.sh's image build (its status file, {@code -Dimages.status}), which runs
   * beside the rest of the run; without one, the archives must be there already.
   */
  static void awaitTheImageBuild(Path images) throws Exception {
    String status = System.getProperty("images.status", "");
    if (!status.isEmpty()) {
      Path file = Path.of(status);
      Instant t = Instant.now();
      Waits.await(
          "dev/images/build.sh to end (dev/test.sh runs it; its log: target/images-build.log)",
          () -> !read(file).isBlank(),
          Duration.ofSeconds(1800));
      assertThat(read(file).strip())
          .as("dev/images/build.sh's exit status (its log: target/images-build.log)")
          .isEqualTo("0");
      System.out.printf(
          "deployment: waited %d s for the image build%n",
          Duration.between(t, Instant.now()).toSeconds());
    }
    for (String image : IMAGES) {
      assertThat(images.resolve(image + ".tar"))
          .as("the image archive; dev/images/build.sh makes it (dev/test.sh runs it)")
          .isRegularFile();
    }
  }

  private static String read(Path file) {
    try {
      return Files.isRegularFile(file) ? Files.readString(file) : "";
    } catch (java.io.IOException e) {
      return "";
    }
  }

  /** The archives imported into the node's containerd, under the names the kubelet asks for. */
  void importImages(Path images) throws Exception {
    assertThat(node.runsKubelet()).as("the first node runs a kubelet (dev/test.sh)").isTrue();
    assertThat(LocalInstall.env(nodeEnv).getOrDefault("NODE_LOCAL_FORWARDS", ""))
        .as("the first node forwards the webhook's port: start.sh --forward " + FORWARD)
        .contains(FORWARD);
    for (String image : IMAGES) {
      Instant t = Instant.now();
      String inNode = node.copyIn(images.resolve(image + ".tar"));
      LocalNode.Result r =
          node.run(
              "ctr -n k8s.io images import " + LocalNode.quote(inNode), Duration.ofSeconds(300));
      // The copy is the host's to delete (the node sees the folder as nobody).
      Files.deleteIfExists(
          Path.of(LocalInstall.env(nodeEnv).get("NODE_LOCAL_SHARE"), "files", image + ".tar"));
      assertThat(r.ok()).as(r.output()).isTrue();
      assertThat(r.output()).contains("unpacking docker.io/standalone-cinder/" + image + ":");
      System.out.printf(
          "deployment: %s imported into %s in %d s%n",
          image, node.name(), Duration.between(t, Instant.now()).toSeconds());
    }
  }

  /**
   * The steps of docs/install.md's kustomize section, with the local overlay, into a cluster
   * without the project's namespace: what an earlier installation left there (the demo module's
   * tests run before this one, with the same names) is deleted first, its CA Secret too, so that
   * the Pod's webhook makes its own.
   */
  void install(Map<String, String> cinder) {
    kubectl.run(null, "delete", "namespace", NS, "--ignore-not-found", "--wait=false");
    gone(NS);
    kubectl.ok(null, "apply", "-k", root.resolve("manifests/namespace").toString());
    String cloudConf =
        String.join(
            "\n",
            "[Global]",
            "auth-url = " + cinder.get("OS_AUTH_URL"),
            "username = " + cinder.get("OS_USERNAME"),
            "password = " + cinder.get("OS_PASSWORD"),
            "tenant-name = " + cinder.get("OS_PROJECT_NAME"),
            "user-domain-name = " + cinder.get("OS_USER_DOMAIN_NAME"),
            "project-domain-name = " + cinder.get("OS_PROJECT_DOMAIN_NAME"),
            "region = " + cinder.get("OS_REGION_NAME"),
            "");
    kubectl.ok(
        """
        apiVersion: v1
        kind: Secret
        metadata: {name: standalone-cinder-cloud-config, namespace: %s}
        stringData:
          cloud.conf: %s
        """
            .formatted(NS, Pods.yamlString(cloudConf)),
        "apply",
        "-f",
        "-");
    kubectl.ok(
        null,
        "label",
        "namespace",
        "kube-system",
        "kubernetes.io/metadata.name=kube-system",
        "--overwrite");
    kubectl.ok(null, "apply", "-k", root.resolve(OVERLAY).toString());
  }

  /** Waits for the Deployment's one Pod (not {@code notUid}) to be Ready on the node. */
  Pod ready(String notUid) {
    Waits.await(
        "the Deployment's Pod Ready on " + node.name(),
        () -> current(notUid) != null && isReady(current(notUid)),
        READY);
    Pod p = current(notUid);
    seenPods.add(p.getMetadata().getName() + "_" + p.getMetadata().getUid());
    assertThat(p.getSpec().getNodeName()).isEqualTo(node.name());
    assertThat(p.getStatus().getContainerStatuses())
        .extracting(ContainerStatus::getName)
        .containsExactlyInAnyOrder("webhook", "provisioner");
    return p;
  }

  private Pod current(String notUid) {
    return admin
        .pods()
        .inNamespace(NS)
        .withLabel("app.kubernetes.io/name", "standalone-cinder")
        .list()
        .getItems()
        .stream()
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
        .filter(p -> !p.getMetadata().getUid().equals(notUid))
        .findFirst()
        .orElse(null);
  }

  private static boolean isReady(Pod p) {
    return p.getStatus() != null
        && p.getStatus().getConditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  /**
   * The CA Secret and every entry's caBundle, written by the webhook's own account (only the Pod
   * holds its token: nothing of the project runs on the host yet).
   *
   * @return the Secret's CA certificate
   */
  String theWebhookWroteItsCa(Instant since) throws Exception {
    Secret s = admin.secrets().inNamespace(NS).withName("standalone-cinder-webhook-ca").get();
    assertThat(s).as("the webhook's CA Secret").isNotNull();
    String ca = s.getData().get("tls.crt");
    assertThat(ca).isNotBlank();
    List<String> bundles = new ArrayList<>();
    Waits.await(
        "every webhook entry's caBundle",
        () -> {
          bundles.clear();
          bundles.addAll(caBundles());
          return bundles.stream().allMatch(b -> b != null && !b.isEmpty());
        },
        Duration.ofSeconds(60));
    String pem = new String(Base64.getDecoder().decode(ca), StandardCharsets.US_ASCII);
    for (String b : bundles) {
      assertThat(new String(Base64.getDecoder().decode(b), StandardCharsets.US_ASCII))
          .contains(pem.strip());
    }
    String webhook = "system:serviceaccount:" + NS + ":standalone-cinder-webhook";
    assertThat(AuditLog.calls(Path.of(kube.get("KUBE_LOCAL_AUDIT_LOG")), since))
        .filteredOn(c -> c.allowed() && webhook.equals(c.user()))
        .extracting(AuditLog.Call::describe)
        .contains(
            "create secrets in " + NS + " named standalone-cinder-webhook-ca",
            "update admissionregistration.k8s.io/mutatingwebhookconfigurations named"
                + " standalone-cinder",
            "update admissionregistration.k8s.io/validatingwebhookconfigurations named"
                + " standalone-cinder");
    return ca;
  }

  private List<String> caBundles() {
    List<String> bundles = new ArrayList<>();
    var admission = admin.admissionRegistration().v1();
    admission
        .mutatingWebhookConfigurations()
        .withName("standalone-cinder")
        .get()
        .getWebhooks()
        .stream()
        .map(MutatingWebhook::getClientConfig)
        .forEach(c -> bundles.add(c.getCaBundle()));
    admission
        .validatingWebhookConfigurations()
        .withName("standalone-cinder")
        .get()
        .getWebhooks()
        .stream()
        .map(ValidatingWebhook::getClientConfig)
        .forEach(c -> bundles.add(c.getCaBundle()));
    return bundles;
  }

  /**
   * The kubelet ran both containers' probes and they passed: Ready, and after two liveness periods
   * no restart, no back-off, no liveness failure at all and no readiness failure once Ready. The
   * startup probe may fail while the JVMs start (15-40 s in the node); that is what it is for, and
   * the count is said.
   */
  void probesPassing(Pod p) throws InterruptedException {
    String name = p.getMetadata().getName();
    Instant started = Instant.parse(p.getStatus().getStartTime());
    long wait = TWO_LIVENESS_PERIODS.minus(Duration.between(started, Instant.now())).toMillis();
    if (wait > 0) {
      Thread.sleep(wait);
    }
    Pod now = admin.pods().inNamespace(NS).withName(name).get();
    assertThat(now.getStatus().getConditions())
        .filteredOn(c -> "Ready".equals(c.getType()))
        .extracting(PodCondition::getStatus)
        .containsExactly("True");
    assertThat(now.getStatus().getContainerStatuses())
        .allSatisfy(
            c -> {
              assertThat(c.getReady()).as(c.getName() + " ready").isTrue();
              assertThat(c.getRestartCount()).as(c.getName() + " restarts").isZero();
            });
    Instant ready =
        Instant.parse(
            now.getStatus().getConditions().stream()
                .filter(c -> "Ready".equals(c.getType()))
                .findFirst()
                .orElseThrow()
                .getLastTransitionTime());
    List<Event> events =
        admin.v1().events().inNamespace(NS).list().getItems().stream()
            .filter(e -> name.equals(e.getInvolvedObject().getName()))
            .toList();
    assertThat(events)
        .extracting(e -> e.getReason() + ": " + e.getMessage())
        .noneMatch(e -> e.startsWith("BackOff") || e.startsWith("Unhealthy: Liveness probe"));
    assertThat(events)
        .filteredOn(
            e -> e.getLastTimestamp() != null && Instant.parse(e.getLastTimestamp()).isAfter(ready))
        .extracting(e -> e.getReason() + ": " + e.getMessage())
        .noneMatch(e -> e.startsWith("Unhealthy"));
    int startup =
        events.stream()
            .filter(e -> e.getMessage() != null && e.getMessage().startsWith("Startup probe"))
            .mapToInt(e -> e.getCount() == null ? 1 : e.getCount())
            .sum();
    System.out.printf(
        "deployment: %s Ready %d s after its start; the startup probe failed %d times before%n",
        name, Duration.between(started, ready).toSeconds(), startup);
  }

  /**
   * Whatever happened: the user's namespace (its claims' volumes are the provisioner Pod's to
   * delete), the installation, the images in the node's memory.
   */
  void uninstall(String userNamespace) {
    Instant start = Instant.now();
    keepTheLogs();
    Instant kept = Instant.now();
    if (userNamespace != null) {
      kubectl.run(null, "delete", "namespace", userNamespace, "--wait=false");
      gone(userNamespace);
    }
    Instant users = Instant.now();
    kubectl.run(
        null,
        "delete",
        "-k",
        root.resolve(OVERLAY).toString(),
        "--ignore-not-found",
        "--wait=false");
    kubectl.run(null, "delete", "namespace", NS, "--ignore-not-found", "--wait=false");
    gone(NS);
    node.run(
        "ctr -n k8s.io images ls -q | grep standalone-cinder/ | xargs -r ctr -n k8s.io images rm",
        Duration.ofSeconds(60));
    System.out.printf(
        "deployment: removed in %d s (the Pods' logs kept in %d s, the user's namespace gone in %d"
            + " s)%n",
        Duration.between(start, Instant.now()).toSeconds(),
        Duration.between(start, kept).toSeconds(),
        Duration.between(kept, users).toSeconds());
  }

  private void gone(String namespace) {
    Waits.await(
        "namespace " + namespace + " deleted",
        () -> admin.namespaces().withName(namespace).get() == null,
        Duration.ofSeconds(240));
  }

  /** The Pods' logs as the node keeps them, beside the suite's (the secrets scan reads them). */
  private void keepTheLogs() {
    try {
      Path logs = Files.createDirectories(Path.of("target/e2e/logs"));
      for (String pod : seenPods) {
        for (String container : List.of("webhook", "provisioner")) {
          LocalNode.Result r =
              node.run(
                  "cat /var/log/pods/" + NS + "_" + pod + "/" + container + "/*.log",
                  Duration.ofSeconds(30));
          Files.writeString(
              logs.resolve("deployment-" + pod.split("_")[0] + "-" + container + ".log"),
              r.output());
        }
      }
    } catch (Exception e) {
      System.out.println("deployment: the Pods' logs not kept: " + e);
    }
  }
}
