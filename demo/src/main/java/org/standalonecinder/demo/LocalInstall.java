package org.standalonecinder.demo;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfigLoader;

/**
 * The project installed on the local control plane (dev/kube-local) as a user installs it: {@code
 * kubectl apply -k} of the manifests (the overlay {@code dev/kube-local/manifests} only drops what
 * needs a kubelet and calls the webhook by url), then the shipped jars started as host processes,
 * each with its ServiceAccount's token from the API server, so that the manifests' RBAC is what is
 * enforced: the provisioner ({@code run}, serving the clone check too) and the webhook ({@code
 * serve}, its CA in a Secret, the caBundle injected by itself). The demo runs on it, and so does
 * the e2e suite (one per run). {@link #asPods} installs the project's own Deployment on the local
 * node instead ({@link PodInstall}), as the demo does where the node can run it.
 */
public final class LocalInstall implements AutoCloseable {

  /** The namespace of the manifests. */
  public static final String NS = "standalone-cinder";

  /** Where the overlay dev/kube-local/manifests tells the API server to call the webhook. */
  public static final int WEBHOOK_PORT = 19443;

  /** The one ServiceAccount of the Pod, which both its containers run as. */
  static final String SERVICE_ACCOUNT = "standalone-cinder";

  /** The webhook container's own account (manifests/base/rbac.yaml). */
  static final String WEBHOOK_ACCOUNT = "standalone-cinder-webhook";

  /** The cluster's initiator, which the PVs carry and the node logs in as. */
  public static final String INITIATOR = "iqn.2026-11.org.standalonecinder:local-node";

  /** The checkout whose jars and manifests are installed. */
  public final Path root;

  /** Logs, kubeconfigs and the policy file of this installation. */
  public final Path work;

  /** dev/kube-local's kube-local.env and dev/cinder-local's cinder-local.env. */
  public final Map<String, String> kubeEnv;

  public final Map<String, String> cinderEnv;

  /** The cluster admin (dev/kube-local's admin kubeconfig). */
  public final KubernetesClient admin;

  /** kubectl as the cluster admin. */
  public final Kubectl kubectl;

  /** Written on every Cinder volume of this installation. */
  public final String clusterId;

  /** When this installation began: the audit log before it belongs to earlier runs. */
  public final java.time.Instant startedAt = java.time.Instant.now();

  /**
   * The admin policy file the webhook reads (the manifests' ConfigMap, as the kubelet mounts it).
   */
  public final Path policyFile;

  /** A Cinder client of the same project (noauth), to look at what the provisioner made. */
  public final CinderClient cinder;

  private final TestNamespaces namespaces;

  /** The processes this installation started: the provisioner, the webhook, more replicas. */
  public final LocalProcesses processes;

  /** What a user does with claims here, and what a node sees of their PVs. */
  public final Claims claims;

  /** Pods that use claims on a node with a kubelet. */
  public final Pods pods;

  private final PodInstall deployment;
  private Map<String, Duration> imported = Map.of();
  private int provisionerHealth;
  private int resolverPort;

  /**
   * Installs and starts everything; returns once the API server gets answers from the webhook.
   *
   * @param root the checkout (its jars must be built)
   * @param work a folder for logs, kubeconfigs and the policy file
   * @param kubeEnv dev/kube-local's kube-local.env
   * @param cinderEnv dev/cinder-local's cinder-local.env
   * @param clusterId written on every Cinder volume of this installation
   */
  public LocalInstall(Path root, Path work, Path kubeEnv, Path cinderEnv, String clusterId)
      throws Exception {
    this(root, work, kubeEnv, cinderEnv, clusterId, null);
  }

  /**
   * Where and how the project runs as Pods: the first node (a kubelet, the webhook's forward), the
   * image archives, and whether the provisioner container authenticates to Keystone (else noauth).
   */
  public record AsPods(LocalNode node, Path nodeEnv, Path images, boolean keystone) {}

  /**
   * The project's own Deployment on the node instead of host processes ({@link PodInstall}): the
   * images imported, manifests/base applied with dev/node-local/deployment, and its Pod Ready;
   * returns once the API server gets answers from the Pod's webhook, which authenticates the API
   * server. {@link #clusterId} is the overlay's.
   */
  public static LocalInstall asPods(Path root, Path work, Path kubeEnv, Path cinderEnv, AsPods pods)
      throws Exception {
    return new LocalInstall(root, work, kubeEnv, cinderEnv, PodInstall.CLUSTER_ID, pods);
  }

  private LocalInstall(
      Path root, Path work, Path kubeEnv, Path cinderEnv, String clusterId, AsPods asPods)
      throws Exception {
    this.root = root.toRealPath();
    this.work = work.toAbsolutePath();
    this.kubeEnv = env(kubeEnv);
    this.cinderEnv = env(cinderEnv);
    this.clusterId = clusterId;
    // Processes started by an installation that fails half-way must not outlive the JVM.
    this.processes = new LocalProcesses(this.work.resolve("logs"));
    Files.createDirectories(this.work.resolve("logs"));
    Path adminConfig = Path.of(this.kubeEnv.get("KUBE_LOCAL_KUBECONFIG"));
    this.admin = client(adminConfig);
    this.claims = new Claims(admin);
    this.pods = new Pods(admin);
    this.kubectl = new Kubectl(this.kubeEnv.get("KUBE_LOCAL_KUBECTL"), adminConfig, this.work);
    this.namespaces = new TestNamespaces(admin, kubectl);
    this.policyFile = this.work.resolve("policy.yaml");
    // Keystone's project, looked at through the noauth API, when the Pod authenticates to it.
    String project =
        asPods != null && asPods.keystone()
            ? this.cinderEnv.get("CINDER_KEYSTONE_PROJECT_ID")
            : this.cinderEnv.get("CINDER_PROJECT_ID");
    this.cinder =
        OpenStackCinderClient.create(
            CloudConfigLoader.load(
                LocalClouds.noauth(this.work, this.cinderEnv, project), Map.of()));
    this.deployment =
        asPods == null
            ? null
            : new PodInstall(
                this.root, this.kubeEnv, admin, kubectl, asPods.node(), asPods.nodeEnv());
    Runtime.getRuntime().addShutdownHook(new Thread(processes::stopAll, "local-install"));
    try {
      if (asPods == null) {
        install();
      } else {
        installPods(asPods);
      }
    } catch (Exception | Error e) {
      close();
      throw e;
    }
  }

  /** The Deployment this installation runs as, or null when it runs host processes. */
  public PodInstall deployment() {
    return deployment;
  }

  /** How long the images took to import, when this installation runs as Pods. */
  public Map<String, Duration> imported() {
    return imported;
  }

  private void installPods(AsPods asPods) throws Exception {
    imported = deployment.importImages(asPods.images());
    deployment.install(
        asPods.keystone() ? LocalClouds.keystone(cinderEnv) : Files.readString(cloudConfig()));
    LocalClouds.cephxSecret(admin, cinderEnv);
    deployment.ready(null);
    awaitWebhook();
  }

  /** The admin's cephx Secret, in the provisioner's namespace. */
  public static final String CEPHX_SECRET = "cephx";

  private void install() throws Exception {
    // A fresh install, as on a new cluster: what an earlier run installed (its CA Secret, the
    // caBundle it wrote) would spare this one calls a first install makes.
    String overlay = root.resolve("dev/kube-local/manifests").toString();
    kubectl.ok(null, "delete", "-k", overlay, "--ignore-not-found", "--wait", "--timeout=120s");
    kubectl.ok(null, "apply", "-k", overlay);
    labelKubeSystem(kubectl);
    Path podConfig =
        ServiceAccounts.kubeconfig(admin, kubeEnv.get("KUBE_LOCAL_SERVER"), work, SERVICE_ACCOUNT);
    Path webhookConfig =
        ServiceAccounts.kubeconfig(admin, kubeEnv.get("KUBE_LOCAL_SERVER"), work, WEBHOOK_ACCOUNT);
    Path policy = policyFile;
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
    LocalClouds.cephxSecret(admin, cinderEnv);

    String provisionerJar = jar("provisioner/target/standalone-cinder-provisioner.jar");
    provisionerHealth = LocalProcesses.freePort();
    resolverPort = LocalProcesses.freePort();
    processes.start(
        "provisioner",
        LocalCommands.provisioner(
            root,
            provisionerJar,
            cloudConfig(),
            clusterId,
            provisionerHealth,
            resolverPort,
            token,
            podConfig));
    Waits.await(
        "the provisioner's /readyz",
        () -> Waits.httpOk("http://127.0.0.1:" + provisionerHealth + "/readyz"),
        Duration.ofSeconds(60));
    Waits.await(
        "the clone check's /healthz",
        () -> Waits.httpOk("http://127.0.0.1:" + resolverPort + "/healthz") && Files.exists(token),
        Duration.ofSeconds(60));
    processes.start(
        "webhook",
        LocalCommands.webhook(
            root,
            jar("webhook/target/standalone-cinder-webhook.jar"),
            webhookConfig,
            policy,
            resolverPort,
            token));
    awaitWebhook();
  }

  /**
   * What Kubernetes 1.21 and later do for every namespace, and docs/install.md asks of an admin on
   * 1.20: the webhook configurations leave kube-system out by this label.
   */
  static void labelKubeSystem(Kubectl kubectl) {
    kubectl.ok(
        null,
        "label",
        "namespace",
        "kube-system",
        "kubernetes.io/metadata.name=kube-system",
        "--overwrite");
  }

  /**
   * Restarts the webhook so that it takes reviews only from the API server ({@code serve
   * --client-ca} with the client certificate dev/kube-local gives the API server), or from anyone
   * who reaches its port, as manifests/base installs it; returns once the API server gets answers.
   */
  public void webhookAuthenticatesCallers(boolean authenticate) throws Exception {
    if (deployment != null) {
      if (!authenticate) {
        throw new UnsupportedOperationException(
            "the Pod's webhook authenticates the API server (" + PodInstall.OVERLAY + ")");
      }
      awaitWebhook();
      return;
    }
    processes.stop("webhook");
    processes.restart(
        "webhook",
        authenticate
            ? List.of(
                "--client-ca",
                kubeEnv.get("KUBE_LOCAL_WEBHOOK_CLIENT_CA"),
                "--client-name",
                kubeEnv.get("KUBE_LOCAL_WEBHOOK_CLIENT_NAME"))
            : List.of());
    awaitWebhook();
  }

  /**
   * Waits until the API server gets answers from the webhook: a dry-run create of a claim in {@code
   * default}, which fails closed while the webhook does not answer (a StorageClass would not: its
   * entries let writes through).
   */
  public void awaitWebhook() {
    Waits.await(
        "the API server calling the webhook",
        () ->
            kubectl
                .run(
                    Claims.yaml(
                        "default", "standalone-cinder-probe", "standalone-cinder-probe", ""),
                    "create",
                    "--dry-run=server",
                    "-f",
                    "-")
                .ok(),
        Duration.ofSeconds(60));
  }

  /**
   * A new namespace named {@code prefix-<random>}; deleted, with its volumes, by {@link #close}.
   */
  public String namespace(String prefix) {
    return namespaces.create(prefix);
  }

  /** The cloud.conf the provisioner reads: the local Cinder, noauth. */
  public Path cloudConfig() {
    return LocalClouds.noauth(work, cinderEnv, cinderEnv.get("CINDER_PROJECT_ID"));
  }

  /**
   * The webhook's headers deadline here (its default): how long a client that trickles a request's
   * headers holds a connection. The idle deadline stays at its default too, longer than the API
   * server keeps an unused connection (a shorter one made it lose a review: EOF).
   */
  public static final java.time.Duration WEBHOOK_HEADERS_DEADLINE =
      org.standalonecinder.webhook.http.WebhookServer.ClientLimits.DEFAULT.headers();

  /** The provisioners' Lease duration here: a standby takes over this long after a crash. */
  public static final int LEASE_SECONDS = 6;

  /** The port of the first provisioner's /healthz, /readyz and /metrics (on 127.0.0.1). */
  public int provisionerHealthPort() {
    List<String> args = processes.firstCommand("provisioner");
    return Integer.parseInt(args.get(args.indexOf("--health-port") + 1));
  }

  /**
   * Starts another provisioner replica, as the first was started but with its own name (in the
   * Lease and events) and health port; it stands by while the first leads.
   */
  public void startProvisionerReplica(String name) throws IOException {
    List<String> args = new ArrayList<>(processes.firstCommand("provisioner"));
    args.set(args.indexOf("--instance") + 1, name);
    args.set(args.indexOf("--health-port") + 1, String.valueOf(LocalProcesses.freePort()));
    // Each replica's clone check, as in its own Pod; the token file is shared (it exists).
    args.set(args.indexOf("--resolver-port") + 1, String.valueOf(LocalProcesses.freePort()));
    processes.start(name, args);
  }

  private String jar(String relative) {
    Path p = root.resolve(relative);
    if (!Files.isRegularFile(p)) {
      throw new IllegalStateException(
          p + " is missing: run `mvn package` (dev/test.sh and dev/demo.sh do)");
    }
    return p.toString();
  }

  /** A client of the kubeconfig's cluster and user (e.g. dev/kube-local's admin). */
  public static KubernetesClient client(Path kubeconfig) throws IOException {
    Config c = Config.fromKubeconfig(null, Files.readString(kubeconfig), kubeconfig.toString());
    return new KubernetesClientBuilder().withConfig(c).build();
  }

  /** The variables of an env file that dev/kube-local or dev/cinder-local wrote. */
  public static Map<String, String> env(Path p) throws IOException {
    if (!Files.isRegularFile(p)) {
      throw new IllegalStateException(
          p
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

  @Override
  public void close() {
    try {
      namespaces.deleteAll(deployment != null || processes.alive("provisioner"));
    } catch (RuntimeException e) {
      System.err.println("cannot delete the test namespaces: " + e.getMessage());
    }
    // A webhook configuration left behind would have the API server call a webhook that is gone:
    // with failurePolicy Fail, every claim write of the cluster would be refused after the run.
    var r =
        kubectl.run(
            null,
            "delete",
            "mutatingwebhookconfigurations,validatingwebhookconfigurations",
            "-l",
            "app.kubernetes.io/part-of=standalone-cinder",
            "--ignore-not-found");
    if (!r.ok()) {
      System.err.println("cannot delete the webhook configurations: " + r.err());
    }
    processes.stopAll();
    if (deployment != null) {
      try {
        deployment.uninstall(null, work.resolve("logs"));
      } catch (RuntimeException e) {
        System.err.println("cannot remove the Deployment: " + e.getMessage());
      }
    }
    cinder.close();
    admin.close();
  }
}
