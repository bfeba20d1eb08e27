package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.standalonecinder.demo.Kubectl;
import org.standalonecinder.demo.LocalInstall;

/**
 * The manifests say {@code failurePolicy: Fail}: while no webhook answers, the API server refuses
 * claims rather than let a clone through unjudged, and takes them again once it answers.
 */
@ExtendWith(Installed.class)
@Order(4)
class WebhookDownE2EIT {

  @Test
  void whileTheWebhookIsDownClaimsAreRefusedAndAcceptedAgainOnceItIsBack(LocalInstall it)
      throws Exception {
    it.kubectl.ok(ClaimLifecycleE2EIT.CLASSES, "apply", "-f", "-");
    String ns = it.namespace("e2e-down");
    String claim = ClaimLifecycleE2EIT.claim(ns, "waiting", "e2e-cinder", "");
    it.stop("webhook");
    try {
      Kubectl.Result r = it.kubectl.run(claim, "create", "-f", "-");
      assertThat(r.ok()).as(r.toString()).isFalse();
      assertThat(r.err())
          .contains("failed calling webhook \"claims.webhook.standalone-cinder.io\"")
          .contains("https://127.0.0.1:" + LocalInstall.WEBHOOK_PORT + "/mutate");
      assertThat(it.admin.persistentVolumeClaims().inNamespace(ns).withName("waiting").get())
          .isNull();
    } finally {
      it.restart("webhook");
      it.awaitWebhook();
    }
    Kubectl.Result r = it.kubectl.run(claim, "create", "-f", "-");
    assertThat(r.ok()).as(r.toString()).isTrue();
    it.bound(ns, "waiting");
    it.kubectl.ok(null, "delete", "pvc", "waiting", "-n", ns, "--timeout=60s");
  }
}
