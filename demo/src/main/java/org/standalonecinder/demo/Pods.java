package org.standalonecinder.demo;

import io.fabric8.kubernetes.api.model.ContainerStateTerminated;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.stream.Collectors;

/**
 * Pods that use a claim on a node with a kubelet (dev/node-local --kubelet): what a user runs, and
 * how it ended. The API server cannot reach the node's kubelet (no logs, no exec), so what a pod
 * has to say it says in its termination message.
 */
public final class Pods {

  /** The image dev/node-local/images.sh makes and the node's containerd holds; never pulled. */
  public static final String BUSYBOX = "standalone-cinder.local/busybox:1";

  /** How a pod's one container ended: its exit code and termination message. */
  public record Ended(String phase, int exitCode, String message) {
    public boolean succeeded() {
      return "Succeeded".equals(phase) && exitCode == 0;
    }
  }

  private final KubernetesClient admin;

  /** Pods seen through the admin's client. */
  public Pods(KubernetesClient admin) {
    this.admin = admin;
  }

  /**
   * A pod that runs {@code script} once in busybox on {@code node} (chosen by the scheduler through
   * the node's host-name label; it tolerates the taint that keeps other pods off the node) with the
   * claim mounted at /data; what the script writes to /dev/termination-log becomes the pod's
   * termination message.
   */
  public static String yaml(String ns, String name, String claim, String node, String script) {
    return """
        apiVersion: v1
        kind: Pod
        metadata: {name: %s, namespace: %s}
        spec:
          nodeSelector: {kubernetes.io/hostname: %s}
          tolerations:
          - {key: standalone-cinder.io/local-node, operator: Exists, effect: NoSchedule}
          restartPolicy: Never
          automountServiceAccountToken: false
          terminationGracePeriodSeconds: 5
          containers:
          - name: main
            image: %s
            imagePullPolicy: Never
            command: [sh, -c, %s]
            volumeMounts: [{name: data, mountPath: /data}]
          volumes:
          - name: data
            persistentVolumeClaim: {claimName: %s}
        """
        .formatted(name, ns, node, BUSYBOX, yamlString(script), claim);
  }

  /**
   * The pod of {@link #yaml} with a second claim, a {@code volumeMode: Block} one, handed to its
   * container as the raw device {@link #DEVICE}.
   */
  public static String withDevice(String podYaml, String claim) {
    String mounts = "    volumeMounts: [{name: data, mountPath: /data}]\n";
    String volumes = "  - name: data\n    persistentVolumeClaim: {claimName: ";
    if (!podYaml.contains(mounts) || !podYaml.contains(volumes)) {
      throw new IllegalArgumentException("not a pod of Pods.yaml: " + podYaml);
    }
    return podYaml
        .replace(mounts, mounts + "    volumeDevices: [{name: raw, devicePath: " + DEVICE + "}]\n")
        .replace(
            volumes,
            "  - name: raw\n    persistentVolumeClaim: {claimName: " + claim + "}\n" + volumes);
  }

  /** A pod of {@link #yaml} whose claim is a {@code volumeMode: Block} one, at {@link #DEVICE}. */
  public static String blockYaml(String ns, String name, String claim, String node, String script) {
    return yaml(ns, name, claim, node, script)
        .replace(
            "volumeMounts: [{name: data, mountPath: /data}]",
            "volumeDevices: [{name: data, devicePath: " + DEVICE + "}]");
  }

  /** Where a Pod of {@link #withDevice} or {@link #blockYaml} finds its Block claim's device. */
  public static final String DEVICE = "/dev/xvda";

  /** The text as one double-quoted YAML scalar (a pod's script). */
  public static String yamlString(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
  }

  /**
   * Waits until the namespace's default ServiceAccount exists: the API server refuses pods in a
   * namespace whose account the token controller has not made yet.
   */
  public void namespaceReady(String ns) {
    Waits.await(
        "the default ServiceAccount of " + ns,
        () -> admin.serviceAccounts().inNamespace(ns).withName("default").get() != null,
        Duration.ofSeconds(30));
  }

  /**
   * Waits until the pod's container runs (its volumes mounted), and returns the pod.
   *
   * @throws IllegalStateException when it ended first or did not start in time, with its story
   */
  public Pod running(String ns, String name, Duration timeout) {
    try {
      Waits.await(
          ns + "/" + name + " running",
          () -> {
            Pod p = admin.pods().inNamespace(ns).withName(name).get();
            String phase = p == null || p.getStatus() == null ? null : p.getStatus().getPhase();
            if ("Succeeded".equals(phase) || "Failed".equals(phase)) {
              throw new IllegalStateException(ns + "/" + name + " ended (" + phase + ")");
            }
            return "Running".equals(phase);
          },
          timeout);
    } catch (IllegalStateException e) {
      throw new IllegalStateException(e.getMessage() + "; " + story(ns, name), e);
    }
    return admin.pods().inNamespace(ns).withName(name).get();
  }

  /** Waits until the pod's container has ended, and returns how. */
  public Ended ended(String ns, String name, Duration timeout) {
    try {
      Waits.await(
          ns + "/" + name + " ended",
          () -> {
            Pod p = admin.pods().inNamespace(ns).withName(name).get();
            return p != null
                && p.getStatus() != null
                && ("Succeeded".equals(p.getStatus().getPhase())
                    || "Failed".equals(p.getStatus().getPhase()));
          },
          timeout);
    } catch (IllegalStateException e) {
      throw new IllegalStateException(e.getMessage() + "; " + story(ns, name), e);
    }
    Pod p = admin.pods().inNamespace(ns).withName(name).get();
    ContainerStateTerminated t =
        p.getStatus().getContainerStatuses().get(0).getState().getTerminated();
    return new Ended(
        p.getStatus().getPhase(),
        t == null ? -1 : t.getExitCode(),
        t == null || t.getMessage() == null ? "" : t.getMessage().strip());
  }

  /** Deletes the pod and waits until the kubelet has stopped it and the API server let it go. */
  public void delete(String ns, String name, Duration timeout) {
    admin.pods().inNamespace(ns).withName(name).delete();
    Waits.await(
        ns + "/" + name + " gone",
        () -> admin.pods().inNamespace(ns).withName(name).get() == null,
        timeout);
  }

  /** The pod's phase and the events about it (the kubelet's attach and mount errors are there). */
  public String story(String ns, String name) {
    Pod p = admin.pods().inNamespace(ns).withName(name).get();
    String phase = p == null ? "no such pod" : "phase " + p.getStatus().getPhase();
    String events =
        admin.v1().events().inNamespace(ns).list().getItems().stream()
            .filter(e -> name.equals(e.getInvolvedObject().getName()))
            .map(e -> e.getReason() + ": " + e.getMessage())
            .collect(Collectors.joining("; "));
    return phase + "; events: " + (events.isEmpty() ? "none" : events);
  }
}
