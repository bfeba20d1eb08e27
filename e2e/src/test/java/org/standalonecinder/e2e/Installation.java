package org.standalonecinder.e2e;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient;
import org.standalonecinder.provisioner.config.CloudConfigLoader;

/**
 * The project installed on the local control plane as a user installs it: {@code kubectl apply -k}
 * of the manifests (the overlay {@code dev/kube-local/manifests} only drops what needs a kubelet
 * and calls the webhook by url), then the shipped jars started as host processes, each with its
 * ServiceAccount's token from the API server, so that the manifests' RBAC is what is enforced: the
 * provisioner ({@code run}), its resolver ({@code resolver}) and the webhook ({@code serve}, its CA
 * in a Secret, the caBundle injected by itself). One per test run; closed at its end.
 */
final class Installation implements ExtensionContext.Store.CloseableResource {

  static final String NS = "standalone-cinder";
  static final int WEBHOOK_PORT = 19443;
  static final String PROVISIONER_SA = "standalone-cinder-provisioner";
  static final String WEBHOOK_SA = "standalone-cinder-webhook";
  static final String INITIATOR = "iqn.2026-11.org.standalonecinder:e2e-node";

  Path root;
  Path work;
  Map<String, String> kubeEnv;
  Map<String, String> cinderEnv;
  KubernetesClient admin;
  Kubectl kubectl;
  final String clusterId = "e2e-" + UUID.randomUUID().toString().substring(0, 8);

  /** When this installation began: the audit log before it belongs to earlier runs. */
  final java.time.Instant startedAt = java.time.Instant.now();

  /**
   * The admin policy file the webhook reads (the manifests' ConfigMap, as the kubelet mounts it).
   */
  Path policyFile;

  CinderClient cinder;
  private final List<Process> processes = new ArrayList<>();
  private final Map<String, Process> byName = new LinkedHashMap<>();
  private final Map<String, List<String>> commands = new LinkedHashMap<>();
  private int provisionerHealth;
  private int resolverPort;

  Installation() throws Exception {
    // Processes started by an installation that fails half-way must not outlive the run.
    Runtime.getRuntime().addShutdownHook(new Thread(this::stopProcesses, "e2e-processes"));
    try {
      install();
    } catch (Exception | Error e) {
      close();
      throw e;
    }
  }

  private void install() throws Exception {
    root = Path.of(System.getProperty("project.root", "..")).toRealPath();
    work = Path.of(System.getProperty("e2e.work", "target/e2e")).toAbsolutePath();
    Files.createDirectories(work.resolve("logs"));
    kubeEnv = env(System.getProperty("kube.local.env", "/tmp/kube-local/kube-local.env"));
    cinderEnv = env(System.getProperty("cinder.local.env", "/tmp/cinder-local/cinder-local.env"));
    Path adminConfig = Path.of(kubeEnv.get("KUBE_LOCAL_KUBECONFIG"));
    admin = client(adminConfig);
    kubectl = new Kubectl(kubeEnv.get("KUBE_LOCAL_KUBECTL"), adminConfig, work);
    cinder = OpenStackCinderClient.create(CloudConfigLoader.load(cloudConfig(), Map.of()));

    kubectl.ok(null, "apply", "-k", root.resolve("dev/kube-local/manifests").toString());
    Path provisionerConfig = serviceAccountKubeconfig(PROVISIONER_SA);
    Path webhookConfig = serviceAccountKubeconfig(WEBHOOK_SA);
    Path policy = work.resolve("policy.yaml");
    policyFile = policy;
    Files.writeString(
        policy,
        admin
            .configMaps()
            .inNamespace(NS)
            .withName("standalone-cinder-webhook-policy")
            .get()
            .getData()
            .get("policy.yaml"));
    Path token = work.resolve("resolver-token");
    Files.deleteIfExists(token);

    String provisionerJar = jar("provisioner/target/standalone-cinder-provisioner.jar");
    provisionerHealth = freePort();
    start(
        "provisioner",
        List.of(
            "-jar",
            provisionerJar,
            "run",
            "--cloud-config",
            cloudConfig().toString(),
            "--cluster-id",
            clusterId,
            "--initiator-name",
            INITIATOR,
            "--connector-ip",
            "127.0.0.1",
            "--namespace",
            NS,
            "--workers",
            "4",
            "--resync-seconds",
            "30",
            "--health-address",
            "127.0.0.1",
            "--health-port",
            String.valueOf(provisionerHealth),
            "--kubeconfig",
            provisionerConfig.toString()));
    resolverPort = freePort();
    start(
        "resolver",
        List.of(
            "-jar",
            provisionerJar,
            "resolver",
            "--cloud-config",
            cloudConfig().toString(),
            "--port",
            String.valueOf(resolverPort),
            "--token-file",
            token.toString(),
            // The resolver is a container of the webhook's pod: the webhook's ServiceAccount.
            "--kubeconfig",
            webhookConfig.toString()));
    await(
        "the provisioner's /readyz",
        () -> httpOk("http://127.0.0.1:" + provisionerHealth + "/readyz"),
        Duration.ofSeconds(60));
    await(
        "the resolver's /healthz",
        () -> httpOk("http://127.0.0.1:" + resolverPort + "/healthz") && Files.exists(token),
        Duration.ofSeconds(60));
    start(
        "webhook",
        List.of(
            "-jar",
            jar("webhook/target/standalone-cinder-webhook.jar"),
            "serve",
            "--kubeconfig",
            webhookConfig.toString(),
            "--namespace",
            NS,
            "--listen",
            "127.0.0.1",
            "--port",
            String.valueOf(WEBHOOK_PORT),
            "--san",
            "127.0.0.1",
            "--policy-file",
            policy.toString(),
            // Certificates and the policy file re-checked every 2 s (30 s in a cluster).
            "--refresh-seconds",
            "2",
            "--resolver",
            "http://127.0.0.1:" + resolverPort,
            "--resolver-token-file",
            token.toString()));
    awaitWebhook();
  }

  /** Waits until the API server gets answers from the webhook (a dry-run create of a class). */
  void awaitWebhook() {
    await(
        "the API server calling the webhook",
        () ->
            kubectl
                .run(
                    """
                    apiVersion: storage.k8s.io/v1
                    kind: StorageClass
                    metadata: {name: e2e-probe}
                    provisioner: openstack.org/standalone-cinder
                    """,
                    "create",
                    "--dry-run=server",
                    "-f",
                    "-")
                .ok(),
        Duration.ofSeconds(60));
  }

  /** A namespace of the test's own. */
  String namespace(String prefix) {
    String ns = prefix + "-" + UUID.randomUUID().toString().substring(0, 6);
    kubectl.ok(null, "create", "namespace", ns);
    return ns;
  }

  /** The cloud.conf the provisioner reads: the local Cinder, noauth. */
  Path cloudConfig() {
    Path f = work.resolve("cloud.conf");
    if (!Files.exists(f)) {
      try {
        Files.writeString(
            f,
            "[Global]\ncinder-endpoint = "
                + cinderEnv.get("CINDER_ENDPOINT")
                + "\ntenant-id = "
                + cinderEnv.get("CINDER_PROJECT_ID")
                + "\nusername = e2e\n");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return f;
  }

  /** Stops a process this installation started (its log stays in target/e2e/logs). */
  void stop(String name) throws InterruptedException {
    Process p = byName.get(name);
    p.destroy();
    if (!p.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor();
    }
  }

  /** Starts a stopped process again, as it was started first. */
  void restart(String name) throws IOException {
    start(name, commands.get(name));
  }

  /**
   * A kubeconfig holding the ServiceAccount's token from the API server (Kubernetes 1.20's token
   * controller puts one in a Secret of the account) and the cluster's CA, as a pod would mount.
   */
  private Path serviceAccountKubeconfig(String account) throws IOException {
    Secret[] found = new Secret[1];
    await(
        "the token of " + account,
        () -> {
          ServiceAccount sa = admin.serviceAccounts().inNamespace(NS).withName(account).get();
          if (sa == null || sa.getSecrets() == null || sa.getSecrets().isEmpty()) {
            return false;
          }
          found[0] =
              admin.secrets().inNamespace(NS).withName(sa.getSecrets().get(0).getName()).get();
          return found[0] != null
              && found[0].getData() != null
              && found[0].getData().get("token") != null;
        },
        Duration.ofSeconds(30));
    String token =
        new String(
            Base64.getDecoder().decode(found[0].getData().get("token")), StandardCharsets.UTF_8);
    Path f = work.resolve(account + ".kubeconfig");
    Files.deleteIfExists(f);
    Files.createFile(
        f, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    Files.writeString(
        f,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: kube-local\n  cluster:\n    server: "
            + kubeEnv.get("KUBE_LOCAL_SERVER")
            + "\n    certificate-authority-data: "
            + found[0].getData().get("ca.crt")
            + "\nusers:\n- name: "
            + account
            + "\n  user:\n    token: "
            + token
            + "\ncontexts:\n- name: "
            + account
            + "\n  context: {cluster: kube-local, user: "
            + account
            + ", namespace: "
            + NS
            + "}\ncurrent-context: "
            + account
            + "\n");
    return f;
  }

  private String jar(String relative) {
    Path p = root.resolve(relative);
    if (!Files.isRegularFile(p)) {
      throw new IllegalStateException(p + " is missing: run `mvn package` (dev/test.sh does)");
    }
    return p.toString();
  }

  private void start(String name, List<String> args) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(ProcessHandle.current().info().command().orElse("java"));
    cmd.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.redirectOutput(
        ProcessBuilder.Redirect.appendTo(work.resolve("logs").resolve(name + ".log").toFile()));
    // Only what the command line says: no cloud or cluster settings from the test's environment.
    pb.environment().keySet().removeIf(k -> k.startsWith("OS_") || k.equals("KUBECONFIG"));
    pb.environment()
        .keySet()
        .removeAll(List.of("CLOUD_CONFIG", "CLUSTER_ID", "INITIATOR_NAME", "POD_NAMESPACE"));
    Process p = pb.start();
    processes.add(p);
    byName.put(name, p);
    commands.put(name, args);
  }

  private static KubernetesClient client(Path kubeconfig) throws IOException {
    Config c = Config.fromKubeconfig(null, Files.readString(kubeconfig), kubeconfig.toString());
    return new KubernetesClientBuilder().withConfig(c).build();
  }

  private static Map<String, String> env(String file) throws IOException {
    Path p = Path.of(file);
    if (!Files.isRegularFile(p)) {
      throw new IllegalStateException(
          file
              + " is missing: start the control plane and Cinder first (dev/test.sh does:"
              + " dev/kube-local/start.sh, dev/cinder-local/start.sh)");
    }
    Map<String, String> m = new LinkedHashMap<>();
    for (String line : Files.readAllLines(p)) {
      int eq = line.indexOf('=');
      if (eq > 0 && !line.startsWith("#")) {
        String v = line.substring(eq + 1).trim();
        if (v.length() >= 2 && (v.startsWith("\"") || v.startsWith("'"))) {
          v = v.substring(1, v.length() - 1);
        }
        m.put(line.substring(0, eq).replaceFirst("^export ", "").trim(), v);
      }
    }
    return m;
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

  private static boolean httpOk(String url) {
    try {
      return HTTP.send(
                  HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(2)).build(),
                  HttpResponse.BodyHandlers.discarding())
              .statusCode()
          == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  static void await(String what, BooleanSupplier condition, Duration timeout) {
    long end = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError(
            "timed out after " + timeout.toSeconds() + " s waiting for " + what);
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
  }

  private synchronized void stopProcesses() {
    for (Process p : processes) {
      p.destroy();
    }
    for (Process p : processes) {
      try {
        if (!p.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
          p.destroyForcibly();
        }
      } catch (InterruptedException e) {
        p.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public void close() {
    stopProcesses();
    if (cinder != null) {
      cinder.close();
    }
    if (admin != null) {
      admin.close();
    }
  }
}
