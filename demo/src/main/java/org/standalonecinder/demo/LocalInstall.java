package org.standalonecinder.demo;

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
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient;
import org.standalonecinder.provisioner.config.CloudConfigLoader;

/**
 * The project installed on the local control plane (dev/kube-local) as a user installs it: {@code
 * kubectl apply -k} of the manifests (the overlay {@code dev/kube-local/manifests} only drops what
 * needs a kubelet and calls the webhook by url), then the shipped jars started as host processes,
 * each with its ServiceAccount's token from the API server, so that the manifests' RBAC is what is
 * enforced: the provisioner ({@code run}, serving the clone check too) and the webhook ({@code
 * serve}, its CA in a Secret, the caBundle injected by itself). The demo runs on it, and so does
 * the e2e suite (one per run).
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
  public KubernetesClient admin;

  /** kubectl as the cluster admin. */
  public Kubectl kubectl;

  /** Written on every Cinder volume of this installation. */
  public final String clusterId;

  /** When this installation began: the audit log before it belongs to earlier runs. */
  public final java.time.Instant startedAt = java.time.Instant.now();

  /**
   * The admin policy file the webhook reads (the manifests' ConfigMap, as the kubelet mounts it).
   */
  public Path policyFile;

  /** A Cinder client of the same project (noauth), to look at what the provisioner made. */
  public CinderClient cinder;

  private final List<Process> processes = new ArrayList<>();
  private final List<String> namespaces = new java.util.concurrent.CopyOnWriteArrayList<>();
  private final Map<String, Process> byName = new LinkedHashMap<>();
  private final Map<String, List<String>> firstCommands = new LinkedHashMap<>();
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
    this.root = root.toRealPath();
    this.work = work.toAbsolutePath();
    this.kubeEnv = env(kubeEnv);
    this.cinderEnv = env(cinderEnv);
    this.clusterId = clusterId;
    // Processes started by an installation that fails half-way must not outlive the JVM.
    Runtime.getRuntime().addShutdownHook(new Thread(this::stopProcesses, "local-install"));
    try {
      install();
    } catch (Exception | Error e) {
      close();
      throw e;
    }
  }

  /** The admin's cephx Secret, in the provisioner's namespace. */
  public static final String CEPHX_SECRET = "cephx";

  /**
   * The admin's one step for Ceph: the key of the user Cinder names, in a Secret the provisioner is
   * told about. Only when the local Cinder runs Ceph.
   */
  private void cephxSecret() throws IOException {
    String keyring = cinderEnv.get("CEPH_CINDER_KEYRING");
    if (keyring == null) {
      return;
    }
    String key = null;
    for (String line : Files.readAllLines(Path.of(keyring))) {
      if (line.trim().startsWith("key")) {
        key = line.substring(line.indexOf('=') + 1).trim();
      }
    }
    if (key == null) {
      throw new IllegalStateException("no key in " + keyring);
    }
    admin
        .secrets()
        .inNamespace(NS)
        .resource(
            new io.fabric8.kubernetes.api.model.SecretBuilder()
                .withNewMetadata()
                .withName(CEPHX_SECRET)
                .withNamespace(NS)
                .addToLabels("standalone-cinder.io/cephx", "true")
                .endMetadata()
                .withStringData(Map.of("key", key))
                .build())
        .createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
  }

  private void install() throws Exception {
    Files.createDirectories(work.resolve("logs"));
    Path adminConfig = Path.of(kubeEnv.get("KUBE_LOCAL_KUBECONFIG"));
    admin = client(adminConfig);
    kubectl = new Kubectl(kubeEnv.get("KUBE_LOCAL_KUBECTL"), adminConfig, work);
    cinder = OpenStackCinderClient.create(CloudConfigLoader.load(cloudConfig(), Map.of()));

    // A fresh install, as on a new cluster: what an earlier run installed (its CA Secret, the
    // caBundle it wrote) would spare this one calls a first install makes.
    String overlay = root.resolve("dev/kube-local/manifests").toString();
    kubectl.ok(null, "delete", "-k", overlay, "--ignore-not-found", "--wait", "--timeout=120s");
    kubectl.ok(null, "apply", "-k", overlay);
    // What Kubernetes 1.21 and later do for every namespace, and docs/install.md asks of an admin
    // on 1.20: the webhook configurations leave kube-system out by this label.
    kubectl.ok(
        null,
        "label",
        "namespace",
        "kube-system",
        "kubernetes.io/metadata.name=kube-system",
        "--overwrite");
    Path podConfig = serviceAccountKubeconfig(SERVICE_ACCOUNT);
    Path webhookConfig = serviceAccountKubeconfig(WEBHOOK_ACCOUNT);
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
    cephxSecret();

    String provisionerJar = jar("provisioner/target/standalone-cinder-provisioner.jar");
    provisionerHealth = freePort();
    resolverPort = freePort();
    start(
        "provisioner",
        List.of(
            // The image's JVM options (images/Dockerfile passes the same file), sized as in the
            // Pod: the JVM sees the container's memory limit (manifests/base) as the machine's.
            "@" + root.resolve("images/jvm/provisioner.options"),
            "-XX:MaxRAM=384m",
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
            // Used only by RBD exports; a Cinder without Ceph never asks for it.
            "--cephx-secret",
            CEPHX_SECRET,
            // Leader election as deployed, with a short Lease so that a failover takes seconds.
            "--instance",
            "provisioner",
            "--lease-duration-seconds",
            String.valueOf(LEASE_SECONDS),
            "--renew-deadline-seconds",
            "4",
            "--retry-period-seconds",
            "1",
            "--health-address",
            "127.0.0.1",
            "--health-port",
            String.valueOf(provisionerHealth),
            // The webhook's clone check, as the Pod's provisioner container serves it.
            "--resolver-port",
            String.valueOf(resolverPort),
            "--resolver-token-file",
            token.toString(),
            "--kubeconfig",
            podConfig.toString()));
    await(
        "the provisioner's /readyz",
        () -> httpOk("http://127.0.0.1:" + provisionerHealth + "/readyz"),
        Duration.ofSeconds(60));
    await(
        "the clone check's /healthz",
        () -> httpOk("http://127.0.0.1:" + resolverPort + "/healthz") && Files.exists(token),
        Duration.ofSeconds(60));
    start(
        "webhook",
        List.of(
            "@" + root.resolve("images/jvm/webhook.options"),
            "-XX:MaxRAM=256m",
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

  /**
   * Waits until the API server gets answers from the webhook: a dry-run create of a claim in {@code
   * default}, which fails closed while the webhook does not answer (a StorageClass would not: its
   * entries let writes through).
   */
  public void awaitWebhook() {
    await(
        "the API server calling the webhook",
        () ->
            kubectl
                .run(
                    claimYaml("default", "standalone-cinder-probe", "standalone-cinder-probe", ""),
                    "create",
                    "--dry-run=server",
                    "-f",
                    "-")
                .ok(),
        Duration.ofSeconds(60));
  }

  /** A claim of 1Gi, ReadWriteOnce, as a user writes it for kubectl ({@code annotations}: YAML). */
  public static String claimYaml(String ns, String name, String className, String annotations) {
    return """
        apiVersion: v1
        kind: PersistentVolumeClaim
        metadata:
          name: %s
          namespace: %s
          annotations: {%s}
        spec:
          storageClassName: %s
          accessModes: [ReadWriteOnce]
          resources: {requests: {storage: 1Gi}}
        """
        .formatted(name, ns, annotations, className);
  }

  /** Waits until Kubernetes' PV controller has bound the claim, and returns its PV. */
  public io.fabric8.kubernetes.api.model.PersistentVolume bound(String ns, String name) {
    await(
        ns + "/" + name + " Bound",
        () -> {
          var c = admin.persistentVolumeClaims().inNamespace(ns).withName(name).get();
          return c != null && c.getStatus() != null && "Bound".equals(c.getStatus().getPhase());
        },
        Duration.ofSeconds(90));
    String pv =
        admin
            .persistentVolumeClaims()
            .inNamespace(ns)
            .withName(name)
            .get()
            .getSpec()
            .getVolumeName();
    return admin.persistentVolumes().withName(pv).get();
  }

  /** The node's view of an iSCSI PV: its portal, target and initiator, and its CHAP Secret. */
  public org.standalonecinder.provisioner.diagnostics.IscsiProbe.Target node(
      io.fabric8.kubernetes.api.model.PersistentVolume pv) {
    var iscsi = pv.getSpec().getIscsi();
    Secret chap =
        admin
            .secrets()
            .inNamespace(iscsi.getSecretRef().getNamespace())
            .withName(iscsi.getSecretRef().getName())
            .get();
    return org.standalonecinder.provisioner.diagnostics.IscsiProbe.Target.of(iscsi, chap);
  }

  /**
   * A new namespace named {@code prefix-<random>}; deleted, with its volumes, by {@link #close}.
   */
  public String namespace(String prefix) {
    String ns = prefix + "-" + UUID.randomUUID().toString().substring(0, 6);
    kubectl.ok(null, "create", "namespace", ns);
    namespaces.add(ns);
    return ns;
  }

  /**
   * Deletes the namespaces {@link #namespace} made and waits, a bounded time, until the provisioner
   * has released their volumes: each run's provisioner has an identity of its own, and would never
   * release another run's, so without this every run would leave its volumes in the local Cinder.
   */
  private void deleteNamespaces() {
    if (namespaces.isEmpty() || admin == null) {
      return;
    }
    Process provisioner = byName.get("provisioner");
    for (String ns : namespaces) {
      kubectl.run(null, "delete", "namespace", ns, "--ignore-not-found", "--wait=false");
    }
    if (provisioner == null || !provisioner.isAlive()) {
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

  /** The cloud.conf the provisioner reads: the local Cinder, noauth. */
  public Path cloudConfig() {
    Path f = work.resolve("cloud.conf");
    if (!Files.exists(f)) {
      try {
        Files.writeString(
            f,
            "[Global]\ncinder-endpoint = "
                + cinderEnv.get("CINDER_ENDPOINT")
                + "\ntenant-id = "
                + cinderEnv.get("CINDER_PROJECT_ID")
                + "\nusername = standalone-cinder\n");
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return f;
  }

  /** The provisioners' Lease duration here: a standby takes over this long after a crash. */
  public static final int LEASE_SECONDS = 6;

  /**
   * Starts another provisioner replica, as the first was started but with its own name (in the
   * Lease and events) and health port; it stands by while the first leads.
   */
  public void startProvisionerReplica(String name) throws IOException {
    List<String> args = new ArrayList<>(firstCommands.get("provisioner"));
    args.set(args.indexOf("--instance") + 1, name);
    args.set(args.indexOf("--health-port") + 1, String.valueOf(freePort()));
    // Each replica's clone check, as in its own Pod; the token file is shared (it exists).
    args.set(args.indexOf("--resolver-port") + 1, String.valueOf(freePort()));
    start(name, args);
  }

  /**
   * The operating system's id of a process this installation started (for its memory, its life).
   */
  public long pid(String name) {
    return byName.get(name).pid();
  }

  /** Kills a process at once (SIGKILL), as a crashed node would: no clean-up, no Lease release. */
  public void kill(String name) throws InterruptedException {
    byName.get(name).destroyForcibly().waitFor();
  }

  /** Stops a process this installation started (its log stays in {@code work/logs}). */
  public void stop(String name) throws InterruptedException {
    Process p = byName.get(name);
    p.destroy();
    if (!p.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor();
    }
  }

  /** Starts a stopped process again, as it was started first. */
  public void restart(String name) throws IOException {
    restart(name, List.of());
  }

  /** Starts a stopped process again with these arguments added to its first ones. */
  public void restart(String name, List<String> extra) throws IOException {
    List<String> args = new ArrayList<>(firstCommands.get(name));
    args.addAll(extra);
    start(name, args);
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
      throw new IllegalStateException(
          p + " is missing: run `mvn package` (dev/test.sh and dev/demo.sh do)");
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
    // As images/Dockerfile sets it for both containers.
    pb.environment().put("MALLOC_ARENA_MAX", "2");
    Process p = pb.start();
    processes.add(p);
    byName.put(name, p);
    firstCommands.putIfAbsent(name, args);
  }

  private static KubernetesClient client(Path kubeconfig) throws IOException {
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

  /** Waits for {@code condition}, polling every 100 ms; an AssertionError after the timeout. */
  public static void await(String what, BooleanSupplier condition, Duration timeout) {
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
    try {
      deleteNamespaces();
    } catch (RuntimeException e) {
      System.err.println("cannot delete the test namespaces: " + e.getMessage());
    }
    stopProcesses();
    if (cinder != null) {
      cinder.close();
    }
    if (admin != null) {
      admin.close();
    }
  }
}
