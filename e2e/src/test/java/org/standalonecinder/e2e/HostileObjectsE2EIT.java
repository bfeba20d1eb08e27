package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.standalonecinder.demo.Claims;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.Waits;

/**
 * What one tenant's object does to the provisioner that serves the whole cluster, on the real
 * control plane: it may fail, with a reason on the object, and nothing else may.
 */
@ExtendWith(Installed.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Order(3)
class HostileObjectsE2EIT {

  private static final String NODE = "e2e-hostile-node";

  private LocalInstall it;

  @BeforeAll
  void classes(LocalInstall installation) {
    it = installation;
    it.kubectl.ok(ClaimLifecycleE2EIT.CLASSES, "apply", "-f", "-");
    it.kubectl.ok(CloneAttacksE2EIT.WFFC_CLASS, "apply", "-f", "-");
    it.admin
        .nodes()
        .resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build())
        .createOr(n -> n.update());
  }

  @AfterAll
  void deleteTheNode() {
    it.admin.nodes().withName(NODE).delete();
  }

  /**
   * The attack: a claim whose {@code k8s.io/CloneRequest} names a source of 100,000 DNS labels (200
   * KB, within an annotation's 256 KiB). Its pattern's repeated group once overflowed the stack of
   * every worker that read it: no claim in the cluster was provisioned after it, while /healthz
   * said ok. The webhook refuses to let a claim gain a clone request, so the tenant adds it while
   * the webhook does not answer (claim updates are let through then).
   */
  @Test
  void aClaimNamingASourceOfAHundredThousandLabelsFailsAloneAndEveryWorkerLives() throws Exception {
    String ns = it.namespace("e2e-poison");
    String poison = "a" + ".a".repeat(100_000);
    it.kubectl.ok(Claims.yaml(ns, "poison", "e2e-later", ""), "create", "-f", "-");
    it.processes.stop("webhook");
    try {
      it.admin
          .persistentVolumeClaims()
          .inNamespace(ns)
          .withName("poison")
          .edit(
              c -> {
                Map<String, String> a = new HashMap<>(c.getMetadata().getAnnotations());
                a.put("k8s.io/CloneRequest", poison);
                c.getMetadata().setAnnotations(a);
                return c;
              });
    } finally {
      it.processes.restart("webhook");
      it.awaitWebhook();
    }
    TopologyE2EIT.select(it, ns, "poison", NODE);
    Waits.await(
        "the poisoned claim told why",
        () ->
            it.admin.events().v1().events().inNamespace(ns).list().getItems().stream()
                .anyMatch(
                    e ->
                        "poison".equals(e.getRegarding().getName())
                            && e.getNote().startsWith("k8s.io/CloneRequest 'a.a.a.a.")
                            && e.getNote()
                                .contains(
                                    "... (200001 characters)' must be <claim> or"
                                        + " <namespace>/<claim>")),
        Duration.ofSeconds(30));

    // Afterwards a plain claim is provisioned and bound as ever.
    long t0 = System.nanoTime();
    it.kubectl.ok(Claims.yaml(ns, "plain", "e2e-cinder", ""), "create", "-f", "-");
    it.claims.bound(ns, "plain");
    long boundMillis = (System.nanoTime() - t0) / 1_000_000;
    System.out.printf(
        "HostileObjectsE2EIT: a plain claim bound %d ms after the poison%n", boundMillis);
    assertThat(boundMillis).as("bound within 10 s").isLessThan(10_000);
    HttpResponse<String> health =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + it.provisionerHealthPort() + "/healthz"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(health.statusCode()).isEqualTo(200);
    assertThat(health.body()).isEqualTo("ok: 4 of 4 workers alive (0 replaced)\n");
    assertThat(Files.readString(it.work.resolve("logs").resolve("provisioner.log")))
        .doesNotContain("StackOverflowError")
        .doesNotContain(poison.substring(0, 1_000));
    it.kubectl.ok(null, "delete", "pvc", "poison", "plain", "-n", ns, "--wait=false");
  }
}
