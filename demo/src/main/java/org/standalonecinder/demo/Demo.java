package org.standalonecinder.demo;

import static org.standalonecinder.demo.DemoConsole.ms;
import static org.standalonecinder.demo.DemoConsole.say;
import static org.standalonecinder.demo.DemoConsole.step;

import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;

/**
 * The main job on one machine: the project installed from its manifests on a real Kubernetes
 * control plane (dev/kube-local: etcd, kube-apiserver, kube-controller-manager and kube-scheduler
 * 1.20), with the real local Cinder; a claim applied with kubectl becomes a Cinder volume and an
 * iSCSI PV that the PV controller binds, a Pod on the node (dev/node-local --kubelet: a real kernel
 * and kubelet) writes a file to it through the kubelet's iSCSI plugin, the API server asks the
 * webhook about clone requests, a Pod reads the same file from the admitted clone, and deleting the
 * claims leaves nothing behind. Where the node cannot run, libiscsi in user space stands in for it
 * and writes and reads raw bytes.
 */
public final class Demo {

  private static final String NS = "default";

  private Demo() {}

  /**
   * {@code java -jar standalone-cinder-demo.jar [cinder-local.env [kube-local.env [node-local.env
   * [images]]]]}, from the checkout (its jars and manifests are installed); with the folder of the
   * image archives dev/images/build.sh made, the project runs as Pods on the node.
   */
  public static void main(String[] args) throws Exception {
    Path cinderEnv = Path.of(args.length > 0 ? args[0] : "/tmp/cinder-local/cinder-local.env");
    Path kubeEnv = Path.of(args.length > 1 ? args[1] : "/tmp/kube-local/kube-local.env");
    Path nodeEnv = Path.of(args.length > 2 ? args[2] : "/tmp/node-local/node-local.env");
    Path images = args.length > 3 ? Path.of(args[3]) : null;
    int code;
    try {
      code = run(Path.of("."), cinderEnv, kubeEnv, nodeEnv, images) ? 0 : 1;
    } catch (DemoConsole.DemoFailed | AssertionError | IllegalStateException e) {
      System.out.println("\nFAILED: " + e.getMessage());
      code = 1;
    }
    System.exit(code);
  }

  /**
   * Runs the demo on the control plane, Cinder and node the env files describe; without a node that
   * runs a kubelet, libiscsi stands in for it. With {@code images} (may be null) and a node that
   * can run them, the project runs as its own Deployment's Pod there; else as host processes.
   */
  public static boolean run(Path root, Path cinderEnv, Path kubeEnv, Path nodeEnv, Path images)
      throws Exception {
    LocalNode node = LocalNode.of(nodeEnv).filter(LocalNode::runsKubelet).orElse(null);
    String unfit = images == null ? "no images given" : PodInstall.unfit(node, nodeEnv, images);
    say(
        "standalone-cinder demo: a real Kubernetes control plane, a real Cinder, "
            + (node == null
                ? "a stand-in node (no node with a kubelet runs: " + nodeEnv + ")"
                : "a real node")
            + (unfit.isEmpty()
                ? "; the project runs as Pods of its own Deployment\n"
                : "; the project runs as host processes (not as Pods: " + unfit + ")\n"));
    Map<String, String> kube = LocalInstall.env(kubeEnv);
    step(
        1,
        "Kubernetes "
            + kube.get("KUBE_LOCAL_VERSION")
            + " at "
            + kube.get("KUBE_LOCAL_SERVER")
            + " (dev/kube-local: etcd, kube-apiserver, kube-controller-manager, kube-scheduler)"
            + (node == null
                ? ""
                : "; Node "
                    + node.name()
                    + ": Linux as a user-space process (dev/node-local) running the kubelet and"
                    + " containerd"));
    long t0 = System.nanoTime();
    Path work = root.resolve("demo/target/demo-run");
    try (LocalInstall it =
        unfit.isEmpty()
            ? LocalInstall.asPods(
                root,
                work,
                kubeEnv,
                cinderEnv,
                new LocalInstall.AsPods(node, nodeEnv, images, false))
            : new LocalInstall(
                root,
                work,
                kubeEnv,
                cinderEnv,
                "demo-" + UUID.randomUUID().toString().substring(0, 6))) {
      step(2, "installed in " + ms(t0) + ": " + (unfit.isEmpty() ? asPods(it) : asProcesses()));
      say(
          "      the webhook wrote its CA into the webhook configurations; Cinder "
              + it.cinderEnv.get("CINDER_ENDPOINT")
              + " (noauth), cluster id "
              + it.clusterId);
      DemoStory.run(it, node);
      return true;
    }
  }

  private static String asProcesses() {
    return "kubectl apply -k dev/kube-local/manifests (manifests/base without its Deployment; the"
        + " jars run as host processes, each with its container's ServiceAccount token)";
  }

  private static String asPods(LocalInstall it) {
    PodInstall d = it.deployment();
    StringBuilder imports = new StringBuilder();
    it.imported()
        .forEach(
            (image, took) ->
                imports
                    .append(imports.length() == 0 ? "" : ", ")
                    .append(image)
                    .append(" ")
                    .append(took.toSeconds())
                    .append(" s"));
    return "the images built from images/Dockerfile (dev/images/build.sh) imported into "
        + d.node().name()
        + "'s containerd ("
        + imports
        + "), kubectl apply -k "
        + PodInstall.OVERLAY
        + " (manifests/base with what a cluster without a registry or a load balancer needs: the"
        + " API server calls the webhook through the node's forwarded port, with a client"
        + " certificate); the Deployment's Pod "
        + d.podName()
        + " Ready on "
        + d.node().name()
        + ", the webhook and the provisioner its two containers";
  }
}
