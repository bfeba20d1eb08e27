package org.standalonecinder.demo;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * What the demo shows and checks: kubectl run as a user types it with what it printed, Pods run to
 * their end, waits and checks that fail the demo with what went wrong, and its numbered steps.
 */
final class DemoConsole {

  /** The namespace of the demo's claims and Pods. */
  static final String NS = "default";

  private DemoConsole() {}

  /**
   * Runs a Pod on the node with the claim at /data to its end (its termination message says what it
   * saw) and shows it as {@code kubectl get pod -o wide} does.
   */
  static Pods.Ended inAPod(
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
  static void letGo(LocalInstall it, LocalNode node, PersistentVolume pv, String pod)
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
  static void kubectl(
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

  static Map<String, String> annotations(LocalInstall it, String claim) {
    PersistentVolumeClaim c =
        it.admin.persistentVolumeClaims().inNamespace(NS).withName(claim).get();
    return c == null || c.getMetadata().getAnnotations() == null
        ? Map.of()
        : c.getMetadata().getAnnotations();
  }

  static void await(String what, java.util.function.BooleanSupplier c, Duration timeout)
      throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    while (!c.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new DemoFailed("timed out waiting for " + what);
      }
      Thread.sleep(50);
    }
  }

  static void check(boolean ok, String failure) {
    if (!ok) {
      throw new DemoFailed(failure);
    }
  }

  static String ms(long since) {
    return String.format("%.1f s", (System.nanoTime() - since) / 1e9);
  }

  static void step(int n, String text) {
    say("[" + n + "/8] " + text);
  }

  static void say(String text) {
    System.out.println(text);
  }

  static final class DemoFailed extends RuntimeException {
    DemoFailed(String message) {
      super(message);
    }
  }
}
