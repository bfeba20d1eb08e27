package org.standalonecinder.demo;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The project's Deployment as a user installs it, on the first local node (dev/node-local with
 * --kubelet): the images dev/images/build.sh made, imported into the node's containerd, then
 * manifests/base applied with the overlay {@code dev/node-local/deployment} (no registry, no load
 * balancer: the API server calls the webhook Pod through the node's forwarded port, and
 * authenticates to it with dev/kube-local's client certificate). The demo runs on it where the node
 * can start, and e2e's DeploymentE2EIT judges it.
 */
public final class PodInstall {

  /** The namespace of the manifests. */
  public static final String NS = LocalInstall.NS;

  /** The overlay, relative to the checkout. */
  public static final String OVERLAY = "dev/node-local/deployment";

  /**
   * The node's forward that the overlay's webhook URL goes through (host port : Pod's hostPort).
   */
  public static final String FORWARD = "18443:8443";

  /** The images the Deployment runs, as dev/images/build.sh names their archives. */
  public static final List<String> IMAGES = List.of("webhook", "provisioner");

  /**
   * The ConfigMap the overlay mounts into the webhook container: the CA of the API server's client
   * certificate for webhooks (dev/kube-local's), so that it takes reviews from the API server only.
   */
  static final String CLIENT_CA = "standalone-cinder-apiserver-client-ca";

  /** The cluster id the overlay's settings give the provisioner. */
  public static final String CLUSTER_ID = "node-local-pods";

  static final Duration READY = Duration.ofSeconds(300);

  private final Path root;
  private final Map<String, String> kube;
  private final KubernetesClient admin;
  private final Kubectl kubectl;
  private final LocalNode node;
  private final Path nodeEnv;
  private final List<String> seenPods = new ArrayList<>();

  /**
   * @param root the checkout (its manifests)
   * @param kube dev/kube-local's kube-local.env
   * @param admin the cluster admin
   * @param kubectl kubectl as the cluster admin
   * @param node the first node, running a kubelet and forwarding {@link #FORWARD}
   * @param nodeEnv its node-local.env
   */
  public PodInstall(
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

  /** The node this installation runs on. */
  public LocalNode node() {
    return node;
  }

  /**
   * Why the Deployment cannot run on this node, or empty when it can: a kubelet, the webhook's
   * forward, and the image archives in {@code images}.
   */
  public static String unfit(LocalNode node, Path nodeEnv, Path images) throws IOException {
    if (node == null || !node.runsKubelet()) {
      return "no node with a kubelet runs";
    }
    if (!LocalInstall.env(nodeEnv).getOrDefault("NODE_LOCAL_FORWARDS", "").contains(FORWARD)) {
      return "the node does not forward the webhook's port (start.sh --forward " + FORWARD + ")";
    }
    for (String image : IMAGES) {
      if (!Files.isRegularFile(images.resolve(image + ".tar"))) {
        return images.resolve(image + ".tar") + " is missing (dev/images/build.sh makes it)";
      }
    }
    return "";
  }

  /**
   * The archives imported into the node's containerd, under the names the kubelet asks for.
   *
   * @return how long each import took, by image
   */
  public Map<String, Duration> importImages(Path images) throws IOException {
    String why = unfit(node, nodeEnv, images);
    if (!why.isEmpty()) {
      throw new IllegalStateException("the Deployment cannot run on " + node.name() + ": " + why);
    }
    Map<String, Duration> took = new java.util.LinkedHashMap<>();
    for (String image : IMAGES) {
      Instant t = Instant.now();
      String inNode = node.copyIn(images.resolve(image + ".tar"));
      LocalNode.Result r =
          node.run(
              "ctr -n k8s.io images import " + LocalNode.quote(inNode), Duration.ofSeconds(300));
      // The copy is the host's to delete (the node sees the folder as nobody).
      Files.deleteIfExists(
          Path.of(LocalInstall.env(nodeEnv).get("NODE_LOCAL_SHARE"), "files", image + ".tar"));
      if (!r.ok() || !r.output().contains("unpacking docker.io/standalone-cinder/" + image + ":")) {
        throw new IllegalStateException("importing " + image + " into the node: " + r.output());
      }
      took.put(image, Duration.between(t, Instant.now()));
    }
    return took;
  }

  /**
   * The steps of docs/install.md's kustomize section, with the local overlay, into a cluster
   * without the project's namespace: what an earlier installation left there (the host-process
   * installation uses the same names) is deleted first, its CA Secret too, so that the Pod's
   * webhook makes its own.
   *
   * @param cloudConf the cloud.conf the provisioner container reads
   */
  public void install(String cloudConf) {
    kubectl.run(null, "delete", "namespace", NS, "--ignore-not-found", "--wait=false");
    gone(NS);
    kubectl.ok(null, "apply", "-k", root.resolve("manifests/namespace").toString());
    kubectl.ok(
        """
        apiVersion: v1
        kind: Secret
        metadata: {name: standalone-cinder-cloud-config, namespace: %s}
        stringData:
          cloud.conf: %s
        ---
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: %s, namespace: %s}
        data:
          ca.crt: %s
        """
            .formatted(NS, Pods.yamlString(cloudConf), CLIENT_CA, NS, clientCa()),
        "apply",
        "-f",
        "-");
    LocalInstall.labelKubeSystem(kubectl);
    kubectl.ok(null, "apply", "-k", root.resolve(OVERLAY).toString());
  }

  private String clientCa() {
    try {
      return Pods.yamlString(Files.readString(Path.of(kube.get("KUBE_LOCAL_WEBHOOK_CLIENT_CA"))));
    } catch (IOException e) {
      throw new IllegalStateException("dev/kube-local's webhook client CA: " + e.getMessage(), e);
    }
  }

  /** Waits for the Deployment's one Pod (not {@code notUid}) to be Ready on the node. */
  public Pod ready(String notUid) {
    Pod[] seen = new Pod[1];
    Waits.await(
        "the Deployment's Pod Ready on " + node.name(),
        () -> (seen[0] = current(notUid)) != null && isReady(seen[0]),
        READY);
    Pod p = seen[0];
    seenPods.add(p.getMetadata().getName() + "_" + p.getMetadata().getUid());
    if (!node.name().equals(p.getSpec().getNodeName())) {
      throw new IllegalStateException(
          p.getMetadata().getName() + " runs on " + p.getSpec().getNodeName());
    }
    return p;
  }

  /** The name of the Pod {@link #ready} saw last. */
  public String podName() {
    return seenPods.isEmpty() ? "" : seenPods.get(seenPods.size() - 1).split("_")[0];
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
   * Whatever happened: the user's namespace if any (its claims' volumes are the provisioner Pod's
   * to delete), the installation, the images in the node's memory; the Pods' logs are kept in
   * {@code logs} first.
   *
   * @return how long it took
   */
  public Duration uninstall(String userNamespace, Path logs) {
    Instant start = Instant.now();
    keepTheLogs(logs);
    if (userNamespace != null) {
      kubectl.run(null, "delete", "namespace", userNamespace, "--wait=false");
      gone(userNamespace);
    }
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
    return Duration.between(start, Instant.now());
  }

  private void gone(String namespace) {
    Waits.await(
        "namespace " + namespace + " deleted",
        () -> admin.namespaces().withName(namespace).get() == null,
        Duration.ofSeconds(240));
  }

  /** The Pods' logs as the node keeps them (a secrets scan may read them). */
  private void keepTheLogs(Path logs) {
    try {
      Files.createDirectories(logs);
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
    } catch (IOException | RuntimeException e) {
      System.out.println("deployment: the Pods' logs not kept: " + e);
    }
  }
}
