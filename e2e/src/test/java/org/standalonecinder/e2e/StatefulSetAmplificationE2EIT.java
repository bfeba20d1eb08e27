package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.demo.Kubectl;
import org.standalonecinder.demo.LocalInstall;

/**
 * The attack: a dry-run StatefulSet (anyone who may create StatefulSets may send one, and it costs
 * the webhook what a real one does) with 300 volumeClaimTemplates, each asking to clone, to make
 * the webhook look up sources by the hundred for one request. Through the real API server: the
 * answer comes at once, and the webhook's lookups (counted in the API server's audit log) are those
 * of the distinct templates judged, at most 16, not of every template.
 */
@ExtendWith(Installed.class)
@Order(3)
class StatefulSetAmplificationE2EIT {

  private static final String WEBHOOK =
      "system:serviceaccount:" + LocalInstall.NS + ":standalone-cinder-webhook";

  private static String statefulSet(String ns, int templates, boolean distinct) {
    StringBuilder y =
        new StringBuilder(
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: amplified, namespace: "
                + ns
                + "}\nspec:\n  serviceName: amplified\n  selector: {matchLabels: {app: a}}\n"
                + "  template:\n    metadata: {labels: {app: a}}\n"
                + "    spec: {containers: [{name: c, image: example.com/none}]}\n"
                + "  volumeClaimTemplates:\n");
    for (int i = 0; i < templates; i++) {
      y.append("  - metadata:\n      name: data-")
          .append(i)
          .append("\n      annotations: {k8s.io/CloneRequest: src-")
          .append(distinct ? i : 0)
          .append("}\n    spec: {storageClassName: e2e-cinder, accessModes: [ReadWriteOnce],")
          .append(" resources: {requests: {storage: 1Gi}}}\n");
    }
    return y.toString();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "300 templates cloning one source: judged once, false, true, 1",
    "300 templates cloning 300 sources: 16 judged, true, true, 16",
    "the install as it comes (no --client-ca): no source looked up, true, false, 0",
  })
  void aDryRunStatefulSetCostsTheWebhookItsDistinctTemplatesAtMost16(
      String name, boolean distinct, boolean authenticated, int judged, LocalInstall it)
      throws Exception {
    it.kubectl.ok(ClaimLifecycleE2EIT.CLASSES, "apply", "-f", "-");
    String ns = it.namespace("e2e-amplified");
    // Only a webhook that knows the API server sent a review looks sources up at all.
    it.webhookAuthenticatesCallers(authenticated);
    Instant t0;
    Instant t1;
    long millis;
    Kubectl.Result r;
    try {
      t0 = Instant.now();
      long start = System.nanoTime();
      r = it.kubectl.run(statefulSet(ns, 300, distinct), "create", "--dry-run=server", "-f", "-");
      millis = (System.nanoTime() - start) / 1_000_000;
      t1 = Instant.now();
    } finally {
      if (authenticated) {
        it.webhookAuthenticatesCallers(false);
      }
    }
    if (authenticated) {
      // No source exists: the webhook refuses, naming the templates it judged.
      assertThat(r.ok()).as(r.toString()).isFalse();
      assertThat(r.err()).contains("volumeClaimTemplates data-0");
    } else {
      // Left to the provisioner, which would tell each claim the controller made.
      assertThat(r.ok()).as(r.toString()).isTrue();
    }
    Thread.sleep(2_000); // the audit log is written asynchronously
    List<AuditLog.Call> lookups =
        AuditLog.calls(it).stream()
            .filter(
                c ->
                    c.user().equals(WEBHOOK)
                        && c.resource().equals("persistentvolumeclaims")
                        && ns.equals(c.namespace())
                        && !c.at().isBefore(t0.minusSeconds(1))
                        && !c.at().isAfter(t1.plusSeconds(1)))
            .toList();
    System.out.printf(
        "StatefulSetAmplificationE2EIT (%s): answered in %d ms; the webhook looked up %d claims%n",
        name, millis, lookups.size());
    assertThat(lookups.size())
        .as("source lookups for one StatefulSet of 300 templates")
        .isEqualTo(judged);
    assertThat(millis).as("ms to answer").isLessThan(10_000);
  }
}
