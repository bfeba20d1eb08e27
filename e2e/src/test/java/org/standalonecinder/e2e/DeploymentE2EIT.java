package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ContainerStatus;
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
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.standalonecinder.demo.Claims;
import org.standalonecinder.demo.Kubectl;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.LocalNode;
import org.standalonecinder.demo.Pods;
import org.standalonecinder.demo.Waits;

/**
 * The project as a user runs it: the images dev/images/build.sh built from images/Dockerfile,
 * imported into the first node's containerd, and manifests/base applied with the local overlay
 * (dev/node-local/deployment: image pull policy, the webhook called by URL through the node's
 * forwarded port, one replica on that node). Then, with nothing of the project running on the host:
 * the Pod's probes pass; the webhook container writes its CA Secret and the configurations'
 * caBundle itself (the audit log says which account did); a claim is provisioned by the provisioner
 * container and mounted by a user's Pod; the API server's reviews reach the webhook Pod (a refusal
 * with its reason, and a clone admitted and made); the Pod deleted, its replacement reuses the CA
 * and does all of it again.
 *
 * <p>It installs under the names the suite's own installation uses, so it runs before it and leaves
 * the cluster as it found it (the images removed from the node too).
 *
 * <p>Not yet in CI (the image build would join the run first): run it with {@code
 * -Ddeployment.e2e=true} after {@code dev/images/build.sh} and with the first node started with
 * {@code --forward 18443:8443} and about 2400M of memory. Here it passed in 272 s.
 */
@Order(-1)
@EnabledIfSystemProperty(named = "deployment.e2e", matches = "true")
class DeploymentE2EIT {

  private static final Path ROOT = Path.of(System.getProperty("project.root", "..")).normalize();
  static final Path IMAGES =
      Path.of(System.getProperty("images.dir", ROOT.resolve("target/images").toString()));
  static final String NS = "standalone-cinder";
  static final String OVERLAY = "dev/node-local/deployment";

  /** The node's forward that the overlay's webhook URL goes through (dev/test.sh starts it). */
  static final String FORWARD = "18443:8443";

  static final Duration READY = Duration.ofSeconds(300);
  static final Duration POD = Duration.ofSeconds(240);

  static final String CLASS =
      """
      apiVersion: storage.k8s.io/v1
      kind: StorageClass
      metadata: {name: e2e-pods}
      provisioner: openstack.org/standalone-cinder
      parameters: {fsType: ext4, smartclone: "true"}
      reclaimPolicy: Delete
      """;

  static Map<String, String> kube;
  static KubernetesClient admin;
  static Kubectl kubectl;
  static Pods pods;
  static Claims claims;
  static LocalNode node;
  static String ns;
  static final List<String> seenPods = new ArrayList<>();

  @BeforeAll
  static void theImagesOnTheNode() throws Exception {
    kube =
        LocalInstall.env(
            Path.of(System.getProperty("kube.local.env", "/tmp/kube-local/kube-local.env")));
    Path kubeconfig = Path.of(kube.get("KUBE_LOCAL_KUBECONFIG"));
    admin = LocalInstall.client(kubeconfig);
    Path work = Files.createDirectories(Path.of("target/e2e/deployment"));
    kubectl = new Kubectl(kube.get("KUBE_LOCAL_KUBECTL"), kubeconfig, work);
    pods = new Pods(admin);
    claims = new Claims(admin);
    node = KernelNodeE2EIT.theNode();
    Path nodeEnv = Path.of(System.getProperty("node.local.env", "/tmp/node-local/node-local.env"));
    assertThat(node.runsKubelet()).as("the first node runs a kubelet (dev/test.sh)").isTrue();
    assertThat(LocalInstall.env(nodeEnv).getOrDefault("NODE_LOCAL_FORWARDS", ""))
        .as("the first node forwards the webhook's port: start.sh --forward " + FORWARD)
        .contains(FORWARD);
    for (String image : List.of("webhook", "provisioner")) {
      Path archive = IMAGES.resolve(image + ".tar");
      assertThat(archive)
          .as("the image archive; dev/images/build.sh makes it (dev/test.sh runs it)")
          .isRegularFile();
      Instant t = Instant.now();
      String inNode = node.copyIn(archive);
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

  /** Whatever happened: the installation deleted, the images gone from the node's memory. */
  @AfterAll
  static void uninstall() {
    keepTheLogs();
    // The user's namespace first: its claims' volumes are the provisioner Pod's to delete.
    if (ns != null) {
      kubectl.run(null, "delete", "namespace", ns, "--wait=false");
      gone(ns);
    }
    kubectl.run(
        null,
        "delete",
        "-k",
        ROOT.resolve(OVERLAY).toString(),
        "--ignore-not-found",
        "--wait=false");
    kubectl.run(null, "delete", "namespace", NS, "--ignore-not-found", "--wait=false");
    gone(NS);
    kubectl.run(null, "delete", "storageclass", "e2e-pods", "--ignore-not-found");
    node.run(
        "ctr -n k8s.io images ls -q | grep standalone-cinder/ | xargs -r ctr -n k8s.io images rm",
        Duration.ofSeconds(60));
  }

  private static void gone(String namespace) {
    Waits.await(
        "namespace " + namespace + " deleted",
        () -> admin.namespaces().withName(namespace).get() == null,
        Duration.ofSeconds(240));
  }

  @Test
  void theDeploymentRunsAsPodsOnTheNodeAndKeepsItsCaAcrossARestart() throws Exception {
    Instant installed = Instant.now();
    install();
    Pod first = ready(null);
    String ca = theWebhookWroteItsCa(installed);
    ns = "e2e-pods-" + UUID.randomUUID().toString().substring(0, 8);
    kubectl.ok(null, "create", "namespace", ns);
    pods.namespaceReady(ns);
    aClaimProvisionedAndMounted("data", "written-through-the-pods");
    theWebhookPodJudges("copy", "data", "written-through-the-pods");
    probesPassing(first);

    kubectl.ok(null, "-n", NS, "delete", "pod", first.getMetadata().getName(), "--wait=false");
    Pod second = ready(first.getMetadata().getUid());
    assertThat(theWebhookWroteItsCa(installed)).as("the CA Secret, reused").isEqualTo(ca);
    aClaimProvisionedAndMounted("after", "written-after-the-restart");
    theWebhookPodJudges("copy-after", "after", "written-after-the-restart");
    probesPassing(second);
    release();
  }

  /** The steps of docs/install.md's kustomize section, with the local overlay. */
  private static void install() throws Exception {
    kubectl.ok(null, "apply", "-k", ROOT.resolve("manifests/namespace").toString());
    Map<String, String> cinder =
        LocalInstall.env(
            Path.of(System.getProperty("cinder.local.env", "/tmp/cinder-local/cinder-local.env")));
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
    kubectl.ok(null, "apply", "-k", ROOT.resolve(OVERLAY).toString());
    kubectl.ok(CLASS, "apply", "-f", "-");
  }

  /** Waits for the Deployment's one Pod (not {@code notUid}) to be Ready on the node. */
  private static Pod ready(String notUid) {
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

  private static Pod current(String notUid) {
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
  private static String theWebhookWroteItsCa(Instant since) throws Exception {
    Secret s = admin.secrets().inNamespace(NS).withName("standalone-cinder-webhook-ca").get();
    assertThat(s).as("the webhook's CA Secret").isNotNull();
    String ca = s.getData().get("tls.crt");
    assertThat(ca).isNotBlank();
    List<String> bundles = new ArrayList<>();
    Waits.await(
        "every webhook entry's caBundle",
        () -> {
          bundles.clear();
          admin
              .admissionRegistration()
              .v1()
              .mutatingWebhookConfigurations()
              .withName("standalone-cinder")
              .get()
              .getWebhooks()
              .stream()
              .map(MutatingWebhook::getClientConfig)
              .forEach(c -> bundles.add(c.getCaBundle()));
          admin
              .admissionRegistration()
              .v1()
              .validatingWebhookConfigurations()
              .withName("standalone-cinder")
              .get()
              .getWebhooks()
              .stream()
              .map(ValidatingWebhook::getClientConfig)
              .forEach(c -> bundles.add(c.getCaBundle()));
          return bundles.stream().allMatch(b -> b != null && !b.isEmpty());
        },
        Duration.ofSeconds(60));
    String pem = new String(java.util.Base64.getDecoder().decode(ca), StandardCharsets.US_ASCII);
    for (String b : bundles) {
      assertThat(new String(java.util.Base64.getDecoder().decode(b), StandardCharsets.US_ASCII))
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

  /** A claim of the provisioner container, written and read back by a user's Pod on the node. */
  private static void aClaimProvisionedAndMounted(String claim, String word) {
    kubectl.ok(Claims.yaml(ns, claim, "e2e-pods", ""), "apply", "-f", "-");
    claims.bound(ns, claim);
    String pod = "write-" + claim;
    kubectl.ok(
        Pods.yaml(
            ns,
            pod,
            claim,
            node.name(),
            "echo " + word + " > /data/word && sync && cat /data/word > /dev/termination-log"),
        "apply",
        "-f",
        "-");
    Pods.Ended e = pods.ended(ns, pod, POD);
    assertThat(e.succeeded()).as(e.toString()).isTrue();
    assertThat(e.message()).isEqualTo(word);
    pods.delete(ns, pod, POD);
  }

  /**
   * The API server's reviews reach the webhook Pod: a claim refused with the webhook's reason, and
   * a clone admitted, made by the provisioner container and holding the source's data.
   */
  private static void theWebhookPodJudges(String clone, String source, String word) {
    Kubectl.Result refused =
        kubectl.run(
            Claims.yaml(ns, "refused-" + clone, "e2e-pods", "")
                .replace("[ReadWriteOnce]", "[ReadWriteMany]"),
            "apply",
            "-f",
            "-");
    assertThat(refused.ok()).as(refused.toString()).isFalse();
    assertThat(refused.err())
        .contains("admission webhook \"claims.webhook.standalone-cinder.io\" denied the request")
        .contains("ReadWriteMany needs volumeMode Block");

    kubectl.ok(
        Claims.yaml(ns, clone, "e2e-pods", "k8s.io/CloneRequest: " + ns + "/" + source),
        "apply",
        "-f",
        "-");
    claims.bound(ns, clone);
    // The provisioner marks the clone once it is bound.
    Waits.await(
        "k8s.io/CloneOf on " + clone,
        () ->
            (ns + "/" + source)
                .equals(
                    admin
                        .persistentVolumeClaims()
                        .inNamespace(ns)
                        .withName(clone)
                        .get()
                        .getMetadata()
                        .getAnnotations()
                        .get("k8s.io/CloneOf")),
        Duration.ofSeconds(60));
    String pod = "read-" + clone;
    kubectl.ok(
        Pods.yaml(ns, pod, clone, node.name(), "cat /data/word > /dev/termination-log"),
        "apply",
        "-f",
        "-");
    Pods.Ended e = pods.ended(ns, pod, POD);
    assertThat(e.succeeded()).as(e.toString()).isTrue();
    assertThat(e.message()).as("the clone holds the source's data").isEqualTo(word);
    pods.delete(ns, pod, POD);
  }

  /**
   * The kubelet ran both containers' probes: Ready (readiness passed), and after two liveness
   * periods (20 s each) no restart and no Unhealthy event.
   */
  private static void probesPassing(Pod p) throws InterruptedException {
    String name = p.getMetadata().getName();
    Instant started = Instant.parse(p.getStatus().getStartTime());
    long wait = Duration.ofSeconds(45).minus(Duration.between(started, Instant.now())).toMillis();
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
    // While the JVMs start (15-40 s in the node) the probes are refused: the manifests have no
    // startupProbe, so the liveness probe counts those too (3 x 20 s before a restart). From
    // Ready on, nothing may fail.
    Instant ready =
        Instant.parse(
            now.getStatus().getConditions().stream()
                .filter(c -> "Ready".equals(c.getType()))
                .findFirst()
                .orElseThrow()
                .getLastTransitionTime());
    assertThat(admin.v1().events().inNamespace(NS).list().getItems())
        .filteredOn(e -> name.equals(e.getInvolvedObject().getName()))
        .filteredOn(
            e -> e.getLastTimestamp() != null && Instant.parse(e.getLastTimestamp()).isAfter(ready))
        .extracting(e -> e.getReason() + ": " + e.getMessage())
        .noneMatch(e -> e.startsWith("Unhealthy") || e.startsWith("BackOff"));
  }

  /** The claims deleted: their PVs go, which the provisioner container does after Cinder's. */
  private static void release() {
    kubectl.ok(null, "-n", ns, "delete", "pvc", "--all", "--wait=false");
    Waits.await(
        "the PVs of " + ns + " deleted by the provisioner Pod",
        () ->
            admin.persistentVolumes().list().getItems().stream()
                .noneMatch(
                    pv ->
                        pv.getSpec().getClaimRef() != null
                            && ns.equals(pv.getSpec().getClaimRef().getNamespace())),
        POD);
  }

  /** The Pods' logs as the node keeps them, beside the suite's (the secrets scan reads them). */
  private static void keepTheLogs() {
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
