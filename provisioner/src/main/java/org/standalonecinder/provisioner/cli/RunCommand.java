package org.standalonecinder.provisioner.cli;

import io.fabric8.kubernetes.client.Config;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.provisioner.app.ProvisionerApp;
import org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfigLoader;
import org.standalonecinder.provisioner.cinder.openstack.config.ConfigException;
import org.standalonecinder.provisioner.controller.RetryPolicy;
import org.standalonecinder.provisioner.mapping.RbdForm;
import org.standalonecinder.provisioner.mapping.RbdOptions;
import org.standalonecinder.provisioner.provision.Placement;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Runs the provisioner: every option has an environment variable, as a Deployment sets them. The
 * resolved configuration is logged at start with secrets masked; a bad value stops the start.
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description = "Run the provisioner controller against the cluster and the cloud.")
final class RunCommand implements Callable<Integer> {

  private static final Logger LOG = LoggerFactory.getLogger(RunCommand.class);

  @Option(
      names = "--cloud-config",
      defaultValue = "${env:CLOUD_CONFIG}",
      description =
          "cloud.conf ([Global], [BlockStorage]); OS_* and OS_CLOUD also count (env CLOUD_CONFIG)")
  Path cloudConfig;

  @Option(
      names = "--provisioner-name",
      defaultValue = "${env:PROVISIONER_NAME:-" + ProvisionerSettings.DEFAULT_NAME + "}",
      description = "the name StorageClasses use (env PROVISIONER_NAME, default ${DEFAULT-VALUE})")
  String provisionerName;

  @Option(
      names = "--cluster-id",
      defaultValue = "${env:CLUSTER_ID}",
      required = true,
      description =
          "written on every volume so clusters sharing a project stay apart (env CLUSTER_ID)")
  String clusterId;

  @Option(
      names = "--identity",
      defaultValue = "${env:PROVISIONER_IDENTITY}",
      description =
          "written on every PV; only such PVs are deleted (env PROVISIONER_IDENTITY, default: the cluster id)")
  String identity;

  @Option(
      names = "--initiator-name",
      defaultValue = "${env:INITIATOR_NAME}",
      required = true,
      description =
          "the nodes' iSCSI initiator IQN, sent to Cinder and written into PVs (env INITIATOR_NAME)")
  String initiatorName;

  @Option(
      names = "--connector-ip",
      defaultValue = "${env:POD_IP:-127.0.0.1}",
      description = "the address Cinder records for exports (env POD_IP, default ${DEFAULT-VALUE})")
  String connectorIp;

  @Option(
      names = "--namespace",
      defaultValue = "${env:POD_NAMESPACE:-standalone-cinder}",
      description =
          "where CHAP Secrets are kept: the provisioner's own namespace (env POD_NAMESPACE, default ${DEFAULT-VALUE})")
  String namespace;

  @Option(
      names = "--multipath",
      defaultValue = "${env:MULTIPATH:-false}",
      description = "ask Cinder for every portal (env MULTIPATH)")
  boolean multipath;

  @Option(
      names = "--wwpns",
      defaultValue = "${env:WWPNS:-}",
      split = ",",
      description =
          "Fibre Channel: the nodes' HBA port names, comma-separated, sent to Cinder so its FC"
              + " driver can zone and map the volume (env WWPNS; none without FC)")
  java.util.List<String> wwpns = new java.util.ArrayList<>();

  @Option(
      names = "--wwnns",
      defaultValue = "${env:WWNNS:-}",
      split = ",",
      description = "Fibre Channel: the HBAs' node names (env WWNNS)")
  java.util.List<String> wwnns = new java.util.ArrayList<>();

  @Option(
      names = "--rbd-form",
      defaultValue = "${env:RBD_FORM:-auto}",
      description =
          "Ceph RBD volumes become in-tree 'rbd' PVs (Kubernetes up to 1.30) or static ceph-csi"
              + " 'csi' PVs (1.31 and later); 'auto' asks the API server's version (env RBD_FORM,"
              + " default ${DEFAULT-VALUE}; a class's rbdForm wins)")
  String rbdForm;

  @Option(
      names = "--iscsi-chap",
      defaultValue = "${env:ISCSI_CHAP:-required}",
      description =
          "required: an iSCSI export without CHAP is refused (any pod that reaches the portal could"
              + " read it); optional: allowed, for a storage network closed to pods (env"
              + " ISCSI_CHAP; a class's iscsiChap wins; default ${DEFAULT-VALUE})")
  String iscsiChap;

  @Option(
      names = "--cephx-secret",
      defaultValue = "${env:CEPHX_SECRET:-}",
      description =
          "the Secret in --namespace with the cephx key ('key') of the Ceph user Cinder names,"
              + " and optionally 'userID' (env CEPHX_SECRET; a class's cephxSecret wins)")
  String cephxSecret;

  @Option(
      names = "--ceph-cluster-id",
      defaultValue = "${env:CEPH_CLUSTER_ID:-}",
      description =
          "ceph-csi's clusterID of the Ceph cluster behind Cinder, for csi PVs (env"
              + " CEPH_CLUSTER_ID; a class's cephClusterID wins)")
  String cephClusterId;

  @Option(
      names = "--ceph-csi-driver",
      defaultValue = "${env:CEPH_CSI_DRIVER:-" + RbdOptions.DEFAULT_CSI_DRIVER + "}",
      description = "ceph-csi's RBD driver name (env CEPH_CSI_DRIVER, default ${DEFAULT-VALUE})")
  String cephCsiDriver;

  @Option(
      names = "--rbd-image-features",
      defaultValue = "${env:RBD_IMAGE_FEATURES:-" + RbdOptions.DEFAULT_IMAGE_FEATURES + "}",
      description =
          "the imageFeatures ceph-csi maps Cinder's images with (env RBD_IMAGE_FEATURES,"
              + " default ${DEFAULT-VALUE})")
  String rbdImageFeatures;

  @Option(
      names = "--zone-label",
      defaultValue = "${env:ZONE_LABEL:-" + Placement.DEFAULT_ZONE_LABEL + "}",
      description =
          "the node label that holds a node's zone: a WaitForFirstConsumer claim's volume is made"
              + " in its node's zone, and classes' allowedTopologies name it (env ZONE_LABEL,"
              + " default ${DEFAULT-VALUE})")
  String zoneLabel;

  @Option(
      names = "--leader-elect",
      defaultValue = "${env:LEADER_ELECT:-true}",
      description =
          "run as one of several replicas: only the holder of a Lease in --namespace acts, the"
              + " others stand by (env LEADER_ELECT, default ${DEFAULT-VALUE})")
  boolean leaderElect;

  @Option(
      names = "--lease-name",
      defaultValue = "${env:LEASE_NAME:-" + ProvisionerApp.Election.DEFAULT_LEASE + "}",
      description = "the Lease (env LEASE_NAME, default ${DEFAULT-VALUE})")
  String leaseName;

  @Option(
      names = "--lease-duration-seconds",
      defaultValue = "${env:LEASE_DURATION_SECONDS:-15}",
      description =
          "a standby takes over this long after the leader's last renewal (default"
              + " ${DEFAULT-VALUE})")
  long leaseSeconds;

  @Option(
      names = "--renew-deadline-seconds",
      defaultValue = "${env:RENEW_DEADLINE_SECONDS:-10}",
      description =
          "the leader stops acting, and exits, when it could not renew for this long (default"
              + " ${DEFAULT-VALUE})")
  long renewSeconds;

  @Option(
      names = "--retry-period-seconds",
      defaultValue = "${env:RETRY_PERIOD_SECONDS:-2}",
      description = "how often replicas try to take or renew the Lease (default ${DEFAULT-VALUE})")
  long retrySeconds;

  @Option(
      names = "--instance",
      defaultValue = "${env:POD_NAME}",
      description =
          "this replica's name in events and the Lease (env POD_NAME, default: host name and"
              + " process id)")
  String instance;

  @Option(
      names = "--workers",
      defaultValue = "${env:WORKERS:-4}",
      description = "claims and volumes worked on at once (env WORKERS, default ${DEFAULT-VALUE})")
  int workers;

  @Option(
      names = "--resync-seconds",
      defaultValue = "${env:RESYNC_SECONDS:-300}",
      description =
          "how often every claim and volume is looked at again (default ${DEFAULT-VALUE})")
  long resyncSeconds;

  @Option(
      names = "--health-address",
      defaultValue = "${env:HEALTH_ADDRESS:-0.0.0.0}",
      description = "address of /healthz and /readyz (default ${DEFAULT-VALUE})")
  String healthAddress;

  @Option(
      names = "--health-port",
      defaultValue = "${env:HEALTH_PORT:-8080}",
      description = "port of /healthz and /readyz (default ${DEFAULT-VALUE})")
  int healthPort;

  @Option(
      names = "--resolver-token-file",
      defaultValue = "${env:RESOLVER_TOKEN_FILE}",
      description =
          "serve the webhook's clone check, with the token in this file (written 0600 with a new"
              + " random token when missing; env RESOLVER_TOKEN_FILE; default: not served)")
  Path resolverTokenFile;

  @Option(
      names = "--resolver-listen",
      defaultValue = "${env:RESOLVER_LISTEN:-127.0.0.1}",
      description = "the clone check's address, loopback only (default ${DEFAULT-VALUE})")
  String resolverHost;

  @Option(
      names = "--resolver-port",
      defaultValue = "${env:RESOLVER_PORT:-8090}",
      description = "the clone check's port (default ${DEFAULT-VALUE})")
  int resolverPort;

  @Option(
      names = "--kubeconfig",
      defaultValue = "${env:KUBECONFIG}",
      description = "kubeconfig; in a pod the service account is used")
  Path kubeconfig;

  private static java.util.List<String> blankless(java.util.List<String> values) {
    return values == null
        ? java.util.List.of()
        : values.stream().filter(v -> !v.isBlank()).toList();
  }

  @Override
  public Integer call() throws Exception {
    // Every problem at once: a Deployment should not need one restart per typo.
    java.util.List<String> problems = new java.util.ArrayList<>();
    if (workers < 1 || workers > 64) {
      problems.add("--workers must be between 1 and 64, was " + workers);
    }
    if (resyncSeconds < 10) {
      problems.add("--resync-seconds must be at least 10, was " + resyncSeconds);
    }
    ProvisionerSettings settings = null;
    try {
      settings =
          new ProvisionerSettings(
              provisionerName,
              identity == null || identity.isBlank() ? clusterId : identity,
              clusterId,
              initiatorName,
              "standalone-cinder-" + clusterId,
              connectorIp,
              namespace,
              multipath,
              blankless(wwpns),
              blankless(wwnns),
              new ProvisionerSettings.RbdDefaults(
                  "auto".equalsIgnoreCase(rbdForm.trim()) ? null : RbdForm.parse(rbdForm),
                  cephxSecret,
                  cephClusterId,
                  cephCsiDriver,
                  rbdImageFeatures));
    } catch (IllegalArgumentException e) {
      problems.add(e.getMessage());
    }
    String chap = iscsiChap == null ? "" : iscsiChap.trim().toLowerCase(java.util.Locale.ROOT);
    if (!org.standalonecinder.api.ClassParameters.ISCSI_CHAP.contains(chap)) {
      problems.add("--iscsi-chap must be required or optional, was '" + iscsiChap + "'");
    } else if (settings != null) {
      settings = settings.withIscsiChapOptional(chap.equals("optional"));
    }
    ProvisionerApp.Election election = null;
    if (leaderElect) {
      try {
        election =
            new ProvisionerApp.Election(
                leaseName,
                Duration.ofSeconds(leaseSeconds),
                Duration.ofSeconds(renewSeconds),
                Duration.ofSeconds(retrySeconds));
      } catch (IllegalArgumentException e) {
        problems.add(e.getMessage());
      }
    }
    CloudConfig cloud = null;
    try {
      cloud = CloudConfigLoader.load(cloudConfig, System.getenv());
    } catch (ConfigException e) {
      problems.add(e.getMessage());
    }
    ProvisionerApp.Resolver resolver = null;
    if (resolverTokenFile != null) {
      try {
        if (!java.net.InetAddress.getByName(resolverHost).isLoopbackAddress()) {
          problems.add("--resolver-listen must be a loopback address, was " + resolverHost);
        }
        resolver =
            new ProvisionerApp.Resolver(
                resolverHost, resolverPort, ResolverCommand.token(resolverTokenFile));
      } catch (java.net.UnknownHostException e) {
        problems.add("--resolver-listen " + resolverHost + ": unknown address");
      } catch (java.io.IOException e) {
        problems.add("--resolver-token-file " + resolverTokenFile + ": " + e.getMessage());
      }
    }
    if (!problems.isEmpty()) {
      problems.forEach(p -> System.err.println("standalone-cinder run: " + p));
      return CheckCommand.BAD_CONFIG;
    }
    try {
      settings =
          settings.withTopology(new Placement.Topology(zoneLabel.trim(), cloud.ignoreVolumeAz()));
    } catch (IllegalArgumentException e) {
      System.err.println("standalone-cinder run: --zone-label: " + e.getMessage());
      return CheckCommand.BAD_CONFIG;
    }
    LOG.info("cloud: {}", cloud.auth());
    cloud.describe().forEach(l -> LOG.info("  {}", l));
    LOG.info("provisioner: {}", settings);

    Config kc =
        kubeconfig != null
            ? Config.fromKubeconfig(Files.readString(kubeconfig))
            : Config.autoConfigure(null);
    String replica =
        instance != null && !instance.isBlank()
            ? instance
            : java.net.InetAddress.getLocalHost().getHostName()
                + "-"
                + ProcessHandle.current().pid();
    ProvisionerApp app =
        ProvisionerApp.start(
            kc,
            OpenStackCinderClient.create(cloud),
            new ProvisionerApp.Options(
                settings,
                replica,
                workers,
                Duration.ofSeconds(resyncSeconds),
                RetryPolicy.DEFAULT,
                healthAddress,
                healthPort,
                election,
                // Exit rather than compete again: the Deployment restarts it as a standby.
                () -> new Thread(() -> System.exit(1), "lost-lease").start(),
                ProvisionerApp.Options.DEFAULT_POOL_STATS,
                resolver));
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  app.close();
                  stopped.countDown();
                },
                "shutdown"));
    stopped.await();
    return 0;
  }
}
