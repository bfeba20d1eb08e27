package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.standalonecinder.demo.Claims;
import org.standalonecinder.demo.DemoStory;
import org.standalonecinder.demo.Kubectl;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.Pods;
import org.standalonecinder.demo.Waits;

/**
 * The project as a user runs it: the images dev/images/build.sh built from images/Dockerfile,
 * imported into the first node's containerd, and manifests/base applied with the local overlay
 * (dev/node-local/deployment: image pull policy, the webhook called by URL through the node's
 * forwarded port and authenticating the API server's client certificate, one replica on that node),
 * as the demo does where the node can start ({@code LocalInstall.asPods}). Then, with nothing of
 * the project running on the host: the Pod's probes pass; the webhook container writes its CA
 * Secret and the configurations' caBundle itself (the audit log says which account did); a claim is
 * provisioned by the provisioner container (authenticating to Keystone) and mounted by a user's
 * Pod; the demo's steps run on it (a claim written by a Pod, the webhook Pod's refusals and a clone
 * it admits, read by a Pod, everything released); the Pod deleted, its replacement reuses the CA,
 * refuses and admits again, and provisions a second clone a Pod reads.
 *
 * <p>It installs under the names the suite's own installation uses, so it runs before it: it first
 * deletes the {@code standalone-cinder} namespace if an earlier installation left one (in CI the
 * demo module's tests do; never run it beside a live installation), and removes everything it made
 * at the end (the images from the node too). dev/test.sh builds the images beside the run and turns
 * it on ({@code -Ddeployment.e2e=true}); elsewhere run it after {@code dev/images/build.sh}, with
 * the first node started with {@code --forward 18443:8443} and about 2400M of memory.
 */
@Order(-1)
@EnabledIfSystemProperty(named = "deployment.e2e", matches = "true")
class DeploymentE2EIT {

  private static final Path ROOT = Path.of(System.getProperty("project.root", "..")).normalize();
  static final Path IMAGES =
      Path.of(System.getProperty("images.dir", ROOT.resolve("target/images").toString()));
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

  static LocalInstall it;
  static KubernetesClient admin;
  static Kubectl kubectl;
  static Pods pods;
  static Claims claims;
  static PodDeployment deployment;
  static String nodeName;
  static String ns;

  @BeforeAll
  static void installedAsPods() throws Exception {
    Path kubeEnv = Path.of(System.getProperty("kube.local.env", "/tmp/kube-local/kube-local.env"));
    var node = KernelNodeE2EIT.theNode();
    nodeName = node.name();
    Path nodeEnv = Path.of(System.getProperty("node.local.env", "/tmp/node-local/node-local.env"));
    PodDeployment.awaitTheImageBuild();
    it =
        LocalInstall.asPods(
            ROOT,
            Path.of("target/e2e/deployment"),
            kubeEnv,
            Path.of(System.getProperty("cinder.local.env", "/tmp/cinder-local/cinder-local.env")),
            new LocalInstall.AsPods(node, nodeEnv, IMAGES, true));
    it.imported()
        .forEach(
            (image, took) ->
                System.out.printf(
                    "deployment: %s imported into %s in %d s%n",
                    image, nodeName, took.toSeconds()));
    admin = it.admin;
    kubectl = it.kubectl;
    pods = it.pods;
    claims = it.claims;
    deployment = new PodDeployment(it.kubeEnv, admin, it.deployment());
  }

  @AfterAll
  static void uninstall() {
    if (it != null) {
      long t = System.nanoTime();
      // Its namespace first (the provisioner Pod releases the claims' volumes), then the Pod.
      it.close();
      kubectl.run(null, "delete", "storageclass", "e2e-pods", "--ignore-not-found");
      System.out.printf("deployment: removed in %d s%n", (System.nanoTime() - t) / 1_000_000_000);
    }
  }

  @Test
  void theDeploymentRunsAsPodsOnTheNodeAndKeepsItsCaAcrossARestart() throws Exception {
    kubectl.ok(CLASS, "apply", "-f", "-");
    Pod first = deployment.ready(null);
    String ca = deployment.theWebhookWroteItsCa(it.startedAt);
    ns = it.namespace("e2e-pods");
    pods.namespaceReady(ns);
    aClaimProvisionedAndMounted("data", "written-through-the-pods");
    // The demo's steps, as `dev/demo.sh` runs them where the node can start: a claim used by a
    // Pod, the webhook Pod's judgments (it authenticates the API server, so it judges requesters
    // and sources), a clone read by a Pod, and everything released.
    DemoStory.run(it, KernelNodeE2EIT.theNode());
    deployment.probesPassing(first);

    kubectl.ok(
        null,
        "-n",
        PodDeployment.NS,
        "delete",
        "pod",
        first.getMetadata().getName(),
        "--wait=false");
    Pod second = deployment.ready(first.getMetadata().getUid());
    assertThat(deployment.theWebhookWroteItsCa(it.startedAt))
        .as("the CA Secret, reused")
        .isEqualTo(ca);
    // The replacement's containers judge and provision again: a refusal, and a clone of the first
    // claim, made by the new provisioner container and read by a Pod.
    theWebhookPodJudges("copy-after", "data", "written-through-the-pods");
    deployment.probesPassing(second);
    release();
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
            nodeName,
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
        Pods.yaml(ns, pod, clone, nodeName, "cat /data/word > /dev/termination-log"),
        "apply",
        "-f",
        "-");
    Pods.Ended e = pods.ended(ns, pod, POD);
    assertThat(e.succeeded()).as(e.toString()).isTrue();
    assertThat(e.message()).as("the clone holds the source's data").isEqualTo(word);
    pods.delete(ns, pod, POD);
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
}
