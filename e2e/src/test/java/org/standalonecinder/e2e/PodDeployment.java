package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhook;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhook;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.standalonecinder.demo.PodInstall;
import org.standalonecinder.demo.Waits;

/**
 * The project's Deployment as a user installs it, on the first node: the images imported into its
 * containerd, manifests/base applied with the local overlay, the Pod waited for and judged from
 * outside (the kubelet's view, the audit log), and everything removed again.
 */
final class PodDeployment {

  static final String NS = PodInstall.NS;
  static final String OVERLAY = PodInstall.OVERLAY;

  /** Twice the liveness probe's period (manifests/base), and a little. */
  static final Duration TWO_LIVENESS_PERIODS = Duration.ofSeconds(45);

  private final Map<String, String> kube;
  private final KubernetesClient admin;
  private final PodInstall install;

  PodDeployment(Map<String, String> kube, KubernetesClient admin, PodInstall install) {
    this.kube = kube;
    this.admin = admin;
    this.install = install;
  }

  /**
   * Waits for dev/test.sh's image build (its status file, {@code -Dimages.status}), which runs
   * beside the rest of the run; without one, the archives must be there already. Whether the
   * archives are there is the installation's to say (it names the one missing).
   */
  static void awaitTheImageBuild() throws Exception {
    String status = System.getProperty("images.status", "");
    if (!status.isEmpty()) {
      Path file = Path.of(status);
      Instant t = Instant.now();
      String rc =
          awaitStatusFile(
              file,
              "dev/images/build.sh to end (dev/test.sh runs it; its log: target/images-build.log)");
      assertThat(rc)
          .as("dev/images/build.sh's exit status (its log: target/images-build.log)")
          .isEqualTo("0");
      System.out.printf(
          "deployment: waited %d s for the image build%n",
          Duration.between(t, Instant.now()).toSeconds());
    }
  }

  /**
   * Waits up to 30 minutes for the status file {@code file} that dev/test.sh writes when something
   * it runs beside the suite ends ({@code what}).
   *
   * @return what the file holds, stripped (an exit status)
   */
  static String awaitStatusFile(Path file, String what) {
    Waits.await(what, () -> !read(file).isBlank(), Duration.ofSeconds(1800));
    return read(file).strip();
  }

  private static String read(Path file) {
    try {
      return Files.isRegularFile(file) ? Files.readString(file) : "";
    } catch (java.io.IOException e) {
      return "";
    }
  }

  /** Waits for the Deployment's one Pod (not {@code notUid}) to be Ready on the node. */
  Pod ready(String notUid) {
    Pod p = install.ready(notUid);
    assertThat(p.getStatus().getContainerStatuses())
        .extracting(ContainerStatus::getName)
        .containsExactlyInAnyOrder("webhook", "provisioner");
    return p;
  }

  /**
   * The CA Secret and every entry's caBundle, written by the webhook's own account (only the Pod
   * holds its token: nothing of the project runs on the host yet).
   *
   * @return the Secret's CA certificate
   */
  String theWebhookWroteItsCa(Instant since) throws Exception {
    Secret s = admin.secrets().inNamespace(NS).withName("standalone-cinder-webhook-ca").get();
    assertThat(s).as("the webhook's CA Secret").isNotNull();
    String ca = s.getData().get("tls.crt");
    assertThat(ca).isNotBlank();
    List<String> bundles = new ArrayList<>();
    Waits.await(
        "every webhook entry's caBundle",
        () -> {
          bundles.clear();
          bundles.addAll(caBundles());
          return bundles.stream().allMatch(b -> b != null && !b.isEmpty());
        },
        Duration.ofSeconds(60));
    String pem = new String(Base64.getDecoder().decode(ca), StandardCharsets.US_ASCII);
    for (String b : bundles) {
      assertThat(new String(Base64.getDecoder().decode(b), StandardCharsets.US_ASCII))
          .contains(pem.strip());
    }
    String webhook = "system:serviceaccount:" + NS + ":standalone-cinder-webhook";
    assertThat(AuditLog.calls(Path.of(kube.get("KUBE_LOCAL_AUDIT_LOG")), since))
        .filteredOn(c -> c.allowed() && webhook.equals(c.user()))
        .extracting(AuditLog.Call::describe)
        .contains(
            "create secrets in " + NS + " named standalone-cinder-webhook-ca",
            "update admissionregistration.k8s.io/mutatingwebhookconfigurations named"
                + " standalone-cinder",
            "update admissionregistration.k8s.io/validatingwebhookconfigurations named"
                + " standalone-cinder");
    return ca;
  }

  private List<String> caBundles() {
    List<String> bundles = new ArrayList<>();
    var admission = admin.admissionRegistration().v1();
    admission
        .mutatingWebhookConfigurations()
        .withName("standalone-cinder")
        .get()
        .getWebhooks()
        .stream()
        .map(MutatingWebhook::getClientConfig)
        .forEach(c -> bundles.add(c.getCaBundle()));
    admission
        .validatingWebhookConfigurations()
        .withName("standalone-cinder")
        .get()
        .getWebhooks()
        .stream()
        .map(ValidatingWebhook::getClientConfig)
        .forEach(c -> bundles.add(c.getCaBundle()));
    return bundles;
  }

  /**
   * The kubelet ran both containers' probes and they passed: Ready, and after two liveness periods
   * no restart, no back-off, no liveness failure at all and no readiness failure once Ready. The
   * startup probe may fail while the JVMs start (15-40 s in the node); that is what it is for, and
   * the count is said.
   */
  void probesPassing(Pod p) throws InterruptedException {
    String name = p.getMetadata().getName();
    Instant started = Instant.parse(p.getStatus().getStartTime());
    long wait = TWO_LIVENESS_PERIODS.minus(Duration.between(started, Instant.now())).toMillis();
    if (wait > 0) {
      Thread.sleep(wait);
    }
    Pod now = admin.pods().inNamespace(NS).withName(name).get();
    assertThat(now.getStatus().getConditions())
        .filteredOn(c -> "Ready".equals(c.getType()))
        .extracting(PodCondition::getStatus)
        .containsExactly("True");
    assertThat(now.getStatus().getContainerStatuses())
        .allSatisfy(
            c -> {
              assertThat(c.getReady()).as(c.getName() + " ready").isTrue();
              assertThat(c.getRestartCount()).as(c.getName() + " restarts").isZero();
            });
    Instant ready =
        Instant.parse(
            now.getStatus().getConditions().stream()
                .filter(c -> "Ready".equals(c.getType()))
                .findFirst()
                .orElseThrow()
                .getLastTransitionTime());
    List<Event> events =
        admin.v1().events().inNamespace(NS).list().getItems().stream()
            .filter(e -> name.equals(e.getInvolvedObject().getName()))
            .toList();
    assertThat(events)
        .extracting(e -> e.getReason() + ": " + e.getMessage())
        .noneMatch(e -> e.startsWith("BackOff") || e.startsWith("Unhealthy: Liveness probe"));
    assertThat(events)
        .filteredOn(
            e -> e.getLastTimestamp() != null && Instant.parse(e.getLastTimestamp()).isAfter(ready))
        .extracting(e -> e.getReason() + ": " + e.getMessage())
        .noneMatch(e -> e.startsWith("Unhealthy"));
    int startup =
        events.stream()
            .filter(e -> e.getMessage() != null && e.getMessage().startsWith("Startup probe"))
            .mapToInt(e -> e.getCount() == null ? 1 : e.getCount())
            .sum();
    System.out.printf(
        "deployment: %s Ready %d s after its start; the startup probe failed %d times before%n",
        name, Duration.between(started, ready).toSeconds(), startup);
  }
}
