package org.standalonecinder.demo;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.diagnostics.IscsiProbe;

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
   * {@code java -jar standalone-cinder-demo.jar [cinder-local.env [kube-local.env
   * [node-local.env]]]}, from the checkout (its jars and manifests are installed).
   */
  public static void main(String[] args) throws Exception {
    Path cinderEnv = Path.of(args.length > 0 ? args[0] : "/tmp/cinder-local/cinder-local.env");
    Path kubeEnv = Path.of(args.length > 1 ? args[1] : "/tmp/kube-local/kube-local.env");
    Path nodeEnv = Path.of(args.length > 2 ? args[2] : "/tmp/node-local/node-local.env");
    int code;
    try {
      code = run(Path.of("."), cinderEnv, kubeEnv, nodeEnv) ? 0 : 1;
    } catch (DemoFailed | AssertionError | IllegalStateException e) {
      System.out.println("\nFAILED: " + e.getMessage());
      code = 1;
    }
    System.exit(code);
  }

  /**
   * Runs the demo on the control plane, Cinder and node the env files describe; without a node that
   * runs a kubelet, libiscsi stands in for it.
   */
  public static boolean run(Path root, Path cinderEnv, Path kubeEnv, Path nodeEnv)
      throws Exception {
    LocalNode node = LocalNode.of(nodeEnv).filter(LocalNode::runsKubelet).orElse(null);
    say(
        "standalone-cinder demo: a real Kubernetes control plane, a real Cinder, "
            + (node == null
                ? "a stand-in node (no node with a kubelet runs: " + nodeEnv + ")\n"
                : "a real node\n"));
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
    try (LocalInstall it =
        new LocalInstall(
            root,
            root.resolve("demo/target/demo-run"),
            kubeEnv,
            cinderEnv,
            "demo-" + UUID.randomUUID().toString().substring(0, 6))) {
      step(
          2,
          "installed in "
              + ms(t0)
              + ": kubectl apply -k dev/kube-local/manifests (manifests/base without its"
              + " Deployment; the jars run as host processes, each with its container's"
              + " ServiceAccount token); the webhook wrote its CA into the webhook"
              + " configurations; Cinder "
              + it.cinderEnv.get("CINDER_ENDPOINT")
              + " (noauth), cluster id "
              + it.clusterId);
      run(it, node);
      return true;
    }
  }

  private static void run(LocalInstall it, LocalNode node) throws Exception {
    kubectl(
        it,
        """
        apiVersion: storage.k8s.io/v1
        kind: StorageClass
        metadata: {name: cinder}
        provisioner: openstack.org/standalone-cinder
        parameters: {fsType: ext4, smartclone: "true"}
        reclaimPolicy: Delete
        ---
        apiVersion: storage.k8s.io/v1
        kind: StorageClass
        metadata: {name: plain}
        provisioner: openstack.org/standalone-cinder
        reclaimPolicy: Delete
        ---
        apiVersion: v1
        kind: PersistentVolumeClaim
        metadata: {name: data, namespace: default}
        spec:
          storageClassName: cinder
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: 1Gi}}
        """,
        true,
        3,
        "classes 'cinder' (fsType ext4, smartclone) and 'plain', and a claim of 1Gi",
        "apply",
        "-f",
        "-");
    long t1 = System.nanoTime();
    PersistentVolume pv = it.claims.bound(NS, "data");
    step(4, "claim default/data Bound by the PV controller " + ms(t1) + " after kubectl apply:");
    // Its claim and its PV by name: PVs are cluster-wide, and a cluster may hold others'.
    it.kubectl
        .ok(null, "get", "pvc/data", "pv/" + pv.getMetadata().getName(), "-n", NS)
        .out()
        .lines()
        .forEach(l -> say("      " + l));
    say("      the PV's source:");
    for (String line : new KubernetesSerialization().asYaml(pv.getSpec().getIscsi()).split("\n")) {
      if (!line.startsWith("---")) {
        say("        " + line);
      }
    }
    String volumeId = pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    Volume v = it.cinder.getVolume(volumeId).orElseThrow(() -> new DemoFailed("volume missing"));
    say(
        "      Cinder volume "
            + v.id()
            + ": "
            + v.status()
            + ", "
            + v.sizeGib()
            + " GiB, metadata "
            + new java.util.TreeMap<>(v.metadata()));
    var ref = pv.getSpec().getIscsi().getSecretRef();
    Secret chap = it.admin.secrets().inNamespace(ref.getNamespace()).withName(ref.getName()).get();
    say(
        "      CHAP Secret "
            + ref.getNamespace()
            + "/"
            + ref.getName()
            + " (type "
            + chap.getType()
            + ", keys "
            + new TreeSet<>(chap.getData().keySet())
            + "; values not shown)");
    // This claim's events only: a claim of the same name from an earlier run keeps its events
    // for an hour.
    String claimUid = pv.getSpec().getClaimRef().getUid();
    await(
        "the provisioner's events",
        () ->
            it.admin.events().v1().events().inNamespace(NS).list().getItems().stream()
                .anyMatch(
                    e ->
                        "ProvisioningSucceeded".equals(e.getReason())
                            && claimUid.equals(e.getRegarding().getUid())),
        Duration.ofSeconds(10));
    String selector = "involvedObject.name=data,involvedObject.uid=" + claimUid;
    say("      $ kubectl get events -n default --field-selector " + selector);
    it.kubectl
        .ok(
            null,
            "get",
            "events",
            "-n",
            NS,
            "--field-selector",
            selector,
            "-o",
            "custom-columns=TYPE:.type,REASON:.reason,BY:.reportingComponent,MESSAGE:.message")
        .out()
        .lines()
        .forEach(l -> say("        " + l));

    IscsiProbe.Target probe = it.claims.node(pv);
    if (node == null) {
      IscsiProbe.Result rw = probe.io("write -P 0x5a 0 1M", "read -P 0x5a 0 1M");
      check(rw.ok(), "the node's write and read: " + rw.output());
      check(
          !probe.withPassword("wrong-secret").io("read 0 4k").ok(), "a wrong secret was accepted");
      step(
          5,
          "a node logs in to "
              + pv.getSpec().getIscsi().getTargetPortal()
              + " as "
              + pv.getSpec().getIscsi().getInitiatorName()
              + " with the Secret's CHAP credentials: wrote 1 MiB of 0x5a and read it back; a"
              + " wrong secret is refused");
    } else {
      long t5 = System.nanoTime();
      Pods.Ended wrote =
          inAPod(
              it,
              node,
              "writer",
              "data",
              "echo '"
                  + WORDS
                  + "' > /data/hello && sync"
                  + " && awk '$2 == \"/data\" {print $3}' /proc/mounts > /dev/termination-log",
              5,
              "a Pod on " + node.name() + " writes /data/hello to the claim");
      check(wrote.succeeded(), "the writer Pod: " + wrote + "; " + it.pods.story(NS, "writer"));
      say(
          "      the kubelet's iSCSI plugin logged in to "
              + pv.getSpec().getIscsi().getTargetPortal()
              + " as "
              + pv.getSpec().getIscsi().getInitiatorName()
              + " with the CHAP Secret (read through the Node authorizer), made the filesystem"
              + " (the Pod saw "
              + wrote.message()
              + " at /data) and mounted it; the Pod wrote its file and ended "
              + ms(t5)
              + " after kubectl create");
      letGo(it, node, pv, "writer");
      check(
          !probe.withPassword("wrong-secret").io("read 0 4k").ok(), "a wrong secret was accepted");
      say("      a login with a wrong CHAP secret is refused");
    }

    step(
        6,
        "the API server asks the webhook (and its resolver asks Cinder) about what users create:");
    // As docs/install.md advises: without it the webhook could not tell the API server's reviews
    // from any pod's, and would leave the sources to the provisioner (its events).
    it.webhookAuthenticatesCallers(true);
    say(
        "      the webhook takes reviews from the API server's client certificate only (serve"
            + " --client-ca), so it judges the sources and the requesters' rights");
    it.kubectl.ok(null, "create", "namespace", "team-m");
    it.kubectl.ok(
        null,
        "create",
        "rolebinding",
        "mallory-edits",
        "-n",
        "team-m",
        "--clusterrole=edit",
        "--user=mallory");
    long t3 = System.nanoTime();
    kubectl(
        it,
        Claims.yaml(NS, "copy", "cinder", "k8s.io/CloneRequest: data"),
        true,
        0,
        "a clone of data in class cinder",
        "create",
        "-f",
        "-");
    kubectl(
        it,
        Claims.yaml(NS, "blank", "plain", "k8s.io/CloneRequest: data"),
        false,
        0,
        "a clone into a class without smartclone",
        "create",
        "-f",
        "-");
    kubectl(
        it,
        Claims.yaml("team-m", "steal", "cinder", "k8s.io/CloneRequest: default/data"),
        false,
        0,
        "mallory, who may create claims in team-m only, clones default/data",
        "--as=mallory",
        "create",
        "-f",
        "-");
    kubectl(
        it,
        Claims.yaml(NS, "fake", "cinder", "k8s.io/CloneOf: default/data"),
        false,
        0,
        "a user writes k8s.io/CloneOf",
        "create",
        "-f",
        "-");
    kubectl(
        it,
        Claims.yaml(NS, "shared", "cinder", "").replace("[ReadWriteOnce]", "[ReadWriteMany]"),
        false,
        0,
        "ReadWriteMany with a filesystem",
        "create",
        "-f",
        "-");
    kubectl(
        it,
        """
        apiVersion: storage.k8s.io/v1
        kind: StorageClass
        metadata: {name: fast}
        provisioner: openstack.org/standalone-cinder
        parameters: {tpye: ssd}
        """,
        false,
        0,
        "a StorageClass with a misspelt parameter",
        "create",
        "-f",
        "-");

    PersistentVolume copyPv = it.claims.bound(NS, "copy");
    await(
        ClaimAnnotations.CLONE_OF,
        () -> "default/data".equals(annotations(it, "copy").get(ClaimAnnotations.CLONE_OF)),
        Duration.ofSeconds(30));
    String copyVolumeId = copyPv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID);
    Volume copy =
        it.cinder
            .getVolume(copyVolumeId)
            .orElseThrow(() -> new DemoFailed("the clone's volume is missing"));
    IscsiProbe.Target copyProbe = it.claims.node(copyPv);
    String seen;
    if (node == null) {
      IscsiProbe.Result read = copyProbe.io("read -P 0x5a 0 1M");
      check(read.ok(), "the clone does not hold the source's data: " + read.output());
      seen = "; the node logs in with the clone's own CHAP Secret and reads the 1 MiB of 0x5a";
    } else {
      seen = "; a Pod reads the clone:";
    }
    step(
        7,
        "the admitted clone: Bound to "
            + copyPv.getMetadata().getName()
            + " "
            + ms(t3)
            + " after kubectl create, Cinder volume "
            + copyVolumeId
            + " cloned from "
            + copy.sourceVolumeId()
            + ", k8s.io/CloneRequest: "
            + annotations(it, "copy").get(ClaimAnnotations.CLONE_REQUEST)
            + " (the webhook's patch), k8s.io/CloneOf: "
            + annotations(it, "copy").get(ClaimAnnotations.CLONE_OF)
            + seen);
    if (node != null) {
      Pods.Ended read =
          inAPod(
              it,
              node,
              "reader",
              "copy",
              "cat /data/hello > /dev/termination-log",
              0,
              "a Pod on " + node.name() + " prints the clone's /data/hello");
      check(
          read.succeeded() && WORDS.equals(read.message()),
          "the reader Pod on the clone: " + read + "; " + it.pods.story(NS, "reader"));
      say(
          "      its message: \""
              + read.message()
              + "\" (through the clone's own target and CHAP Secret)");
      letGo(it, node, copyPv, "reader");
    }

    long t2 = System.nanoTime();
    kubectl(it, null, true, 0, "", "delete", "pvc", "copy", "data", "-n", NS, "--timeout=60s");
    await(
        "the released PVs torn down",
        () ->
            it.admin.persistentVolumes().withName(pv.getMetadata().getName()).get() == null
                && it.admin.persistentVolumes().withName(copyPv.getMetadata().getName()).get()
                    == null,
        Duration.ofSeconds(90));
    check(
        it.cinder.getVolume(volumeId).isEmpty() && it.cinder.getVolume(copyVolumeId).isEmpty(),
        "a Cinder volume is still there");
    check(
        it.admin.secrets().inNamespace(LocalInstall.NS).list().getItems().stream()
            .noneMatch(x -> "kubernetes.io/iscsi-chap".equals(x.getType())),
        "a CHAP Secret is still there");
    check(
        !probe.io("read 0 4k").ok() && !copyProbe.io("read 0 4k").ok(),
        "a target still accepts the login");
    step(
        8,
        "the PV controller released both PVs and the provisioner tore them down "
            + ms(t2)
            + " after kubectl delete: Cinder volumes gone, CHAP Secrets gone, the targets"
            + " refuse the login");
    it.kubectl.ok(null, "delete", "namespace", "team-m", "--wait=false");
    it.kubectl.ok(null, "delete", "storageclass", "cinder", "plain");
    say(
        "\ndone: kubectl apply -> Cinder volume -> iSCSI PV bound by Kubernetes -> "
            + (node == null ? "data" : "a Pod's file")
            + " -> clone judged by the webhook -> the same "
            + (node == null ? "data" : "file in a Pod")
            + " -> kubectl delete -> nothing left.");
  }

  private static final String WORDS = "hello from a pod";

  /**
   * Runs a Pod on the node with the claim at /data to its end (its termination message says what it
   * saw) and shows it as {@code kubectl get pod -o wide} does.
   */
  private static Pods.Ended inAPod(
      LocalInstall it,
      LocalNode node,
      String pod,
      String claim,
      String script,
      int step,
      String what)
      throws Exception {
    it.pods.namespaceReady(NS);
    kubectl(
        it, Pods.yaml(NS, pod, claim, node.name(), script), true, step, what, "create", "-f", "-");
    Pods.Ended ended = it.pods.ended(NS, pod, Duration.ofMinutes(4));
    it.kubectl
        .ok(null, "get", "pod", pod, "-n", NS, "-o", "wide")
        .out()
        .lines()
        .forEach(l -> say("        " + l));
    return ended;
  }

  /**
   * Deletes the Pod and waits until the kubelet has unmounted the PV and logged out: it then
   * reports the volume no longer in use on its Node.
   */
  private static void letGo(LocalInstall it, LocalNode node, PersistentVolume pv, String pod)
      throws Exception {
    long t = System.nanoTime();
    kubectl(it, null, true, 0, "", "delete", "pod", pod, "-n", NS);
    String iqn = pv.getSpec().getIscsi().getIqn();
    await(
        "the kubelet letting go of " + pv.getMetadata().getName(),
        () -> {
          var n = it.admin.nodes().withName(node.name()).get();
          return n.getStatus().getVolumesInUse() == null
              || n.getStatus().getVolumesInUse().stream().noneMatch(v -> v.contains(iqn));
        },
        Duration.ofMinutes(2));
    say(
        "      the kubelet unmounted it and logged out "
            + ms(t)
            + " after kubectl delete (Node "
            + node.name()
            + " no longer lists it in volumesInUse)");
  }

  /**
   * Runs kubectl as a user types it, shows the command and what it printed, and checks that it
   * succeeded or failed as expected.
   */
  private static void kubectl(
      LocalInstall it, String stdin, boolean succeeds, int step, String what, String... args)
      throws Exception {
    Kubectl.Result r = it.kubectl.run(stdin, args);
    check(
        r.ok() == succeeds,
        "kubectl "
            + String.join(" ", args)
            + " ("
            + what
            + "): expected "
            + (succeeds ? "success" : "a refusal")
            + ", got "
            + r);
    String line = "$ kubectl " + String.join(" ", args) + (what.isEmpty() ? "" : "   # " + what);
    if (step > 0) {
      step(step, line);
    } else {
      say("      " + line);
    }
    List.of(r.out(), r.err()).stream()
        .flatMap(String::lines)
        // kubectl 1.32 against a 1.20 server says so on every call; once in the README is enough.
        .filter(l -> !l.startsWith("Warning: version difference"))
        .forEach(l -> say("        " + l));
  }

  private static Map<String, String> annotations(LocalInstall it, String claim) {
    PersistentVolumeClaim c =
        it.admin.persistentVolumeClaims().inNamespace(NS).withName(claim).get();
    return c == null || c.getMetadata().getAnnotations() == null
        ? Map.of()
        : c.getMetadata().getAnnotations();
  }

  private static void await(String what, java.util.function.BooleanSupplier c, Duration timeout)
      throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    while (!c.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new DemoFailed("timed out waiting for " + what);
      }
      Thread.sleep(50);
    }
  }

  private static void check(boolean ok, String failure) {
    if (!ok) {
      throw new DemoFailed(failure);
    }
  }

  private static String ms(long since) {
    return String.format("%.1f s", (System.nanoTime() - since) / 1e9);
  }

  private static void step(int n, String text) {
    say("[" + n + "/8] " + text);
  }

  private static void say(String text) {
    System.out.println(text);
  }

  private static final class DemoFailed extends RuntimeException {
    DemoFailed(String message) {
      super(message);
    }
  }
}
