package org.standalonecinder.demo;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.UUID;

/**
 * The namespaces a test run makes, and their deletion at its end with the volumes of their claims:
 * each run's provisioner has an identity of its own and would never release another run's.
 */
final class TestNamespaces {

  private final KubernetesClient admin;
  private final Kubectl kubectl;
  private final List<String> namespaces = new java.util.concurrent.CopyOnWriteArrayList<>();

  TestNamespaces(KubernetesClient admin, Kubectl kubectl) {
    this.admin = admin;
    this.kubectl = kubectl;
  }

  /**
   * A new namespace named {@code prefix-<random>}; deleted, with its volumes, by {@link
   * #deleteAll}.
   */
  String create(String prefix) {
    String ns = prefix + "-" + UUID.randomUUID().toString().substring(0, 6);
    kubectl.ok(null, "create", "namespace", ns);
    namespaces.add(ns);
    return ns;
  }

  /**
   * Deletes the namespaces {@link #create} made and waits, a bounded time, until the provisioner
   * has released their volumes: each run's provisioner has an identity of its own, and would never
   * release another run's, so without this every run would leave its volumes in the local Cinder.
   */
  void deleteAll(boolean provisionerRuns) {
    if (namespaces.isEmpty()) {
      return;
    }

    for (String ns : namespaces) {
      kubectl.run(null, "delete", "namespace", ns, "--ignore-not-found", "--wait=false");
    }
    if (!provisionerRuns) {
      return;
    }
    java.util.Set<String> ours = java.util.Set.copyOf(namespaces);
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(120);
    long left;
    do {
      left =
          admin.persistentVolumes().list().getItems().stream()
              .filter(
                  pv ->
                      "Delete".equals(pv.getSpec().getPersistentVolumeReclaimPolicy())
                          && pv.getSpec().getClaimRef() != null
                          && ours.contains(pv.getSpec().getClaimRef().getNamespace()))
              .count();
      if (left == 0) {
        return;
      }
      try {
        Thread.sleep(500);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    } while (System.nanoTime() < deadline);
    System.err.println(
        left + " volumes of the test namespaces not released in 120 s: left in the local Cinder");
  }
}
