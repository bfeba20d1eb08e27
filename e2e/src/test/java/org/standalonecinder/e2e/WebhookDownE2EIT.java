package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.standalonecinder.demo.Kubectl;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.Waits;

/**
 * What an outage of the webhook blocks, in the form Kubernetes 1.20 can express (a namespace
 * selector, docs/webhook.md): the creation of claims in users' namespaces fails closed (the API
 * server refuses them rather than let a clone through unjudged, and takes them again once it
 * answers); claims in kube-system, the PV controller's binds and the protection controller's
 * finalizer removals (updates) do not wait on it.
 */
@ExtendWith(Installed.class)
@Order(4)
class WebhookDownE2EIT {

  @Test
  void whileTheWebhookIsDownOnlyClaimCreationInUsersNamespacesWaits(LocalInstall it)
      throws Exception {
    it.kubectl.ok(ClaimLifecycleE2EIT.CLASSES, "apply", "-f", "-");
    String ns = it.namespace("e2e-down");
    String claim = ClaimLifecycleE2EIT.claim(ns, "waiting", "e2e-cinder", "");
    // A claim bound statically, waiting for its PV: the PV controller binds it by an update.
    String staticClaim =
        """
        apiVersion: v1
        kind: PersistentVolumeClaim
        metadata: {name: static, namespace: %s}
        spec:
          storageClassName: ""
          volumeName: e2e-down-static-%s
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: 1Gi}}
        """
            .formatted(ns, ns);
    it.kubectl.ok(staticClaim, "create", "-f", "-");
    it.processes.stop("webhook");
    try {
      // Another provisioner's claim in kube-system: never sent to the webhook.
      String foreign =
          """
          apiVersion: v1
          kind: PersistentVolumeClaim
          metadata: {name: e2e-down-%s, namespace: kube-system}
          spec:
            storageClassName: other-provisioners-class
            accessModes: [ReadWriteOnce]
            resources: {requests: {storage: 1Gi}}
          """
              .formatted(ns);
      Kubectl.Result k = it.kubectl.run(foreign, "create", "-f", "-");
      assertThat(k.ok()).as("kube-system does not wait on the webhook: " + k).isTrue();
      it.kubectl.ok(null, "delete", "pvc", "e2e-down-" + ns, "-n", "kube-system", "--wait=false");

      // The PV arrives while the webhook is down: the PV controller binds the claim all the same.
      String pv =
          """
          apiVersion: v1
          kind: PersistentVolume
          metadata: {name: e2e-down-static-%s}
          spec:
            capacity: {storage: 1Gi}
            accessModes: [ReadWriteOnce]
            persistentVolumeReclaimPolicy: Retain
            claimRef: {namespace: %s, name: static}
            iscsi: {targetPortal: "127.0.0.1:3260", iqn: "iqn.2026-11.org.example:none", lun: 0}
          """
              .formatted(ns, ns);
      it.kubectl.ok(pv, "create", "-f", "-");
      Waits.await(
          "the PV controller's bind while the webhook is down",
          () -> {
            var c = it.admin.persistentVolumeClaims().inNamespace(ns).withName("static").get();
            return c.getStatus() != null && "Bound".equals(c.getStatus().getPhase());
          },
          java.time.Duration.ofSeconds(60));
      // ... and the protection controller lets it go.
      it.kubectl.ok(null, "delete", "pvc", "static", "-n", ns, "--timeout=60s");
      it.kubectl.ok(null, "delete", "pv", "e2e-down-static-" + ns, "--timeout=60s");

      Kubectl.Result r = it.kubectl.run(claim, "create", "-f", "-");
      assertThat(r.ok()).as(r.toString()).isFalse();
      assertThat(r.err())
          .contains("failed calling webhook \"claims.webhook.standalone-cinder.io\"")
          .contains("https://127.0.0.1:" + LocalInstall.WEBHOOK_PORT + "/mutate");
      assertThat(it.admin.persistentVolumeClaims().inNamespace(ns).withName("waiting").get())
          .isNull();
    } finally {
      it.processes.restart("webhook");
      it.awaitWebhook();
    }
    Kubectl.Result r = it.kubectl.run(claim, "create", "-f", "-");
    assertThat(r.ok()).as(r.toString()).isTrue();
    it.claims.bound(ns, "waiting");
    it.kubectl.ok(null, "delete", "pvc", "waiting", "-n", ns, "--timeout=60s");
  }
}
