package org.standalonecinder.provisioner.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.standalonecinder.api.settings.Setting;
import org.standalonecinder.api.settings.SettingsTable;
import org.standalonecinder.api.settings.Values;
import org.standalonecinder.provisioner.app.ProvisionerApp;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig;
import org.standalonecinder.provisioner.mapping.RbdForm;
import org.standalonecinder.provisioner.mapping.RbdOptions;
import org.standalonecinder.provisioner.provision.CopyLimits;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;
import org.standalonecinder.provisioner.provision.ProvisionerSettings.RbdDefaults;
import org.standalonecinder.provisioner.snapshot.SnapshotLimits;

/**
 * {@code run}'s settings: one table (flag, environment variable, parser, default, doc) and what
 * they make together. docs/provisioner.md lists the same rows ({@code SettingsDocsTest}).
 */
final class RunSettings {

  private RunSettings() {}

  static final Setting<String> CLUSTER_ID =
      Setting.text("--cluster-id")
          .then(RunSettings::clusterId)
          .env("CLUSTER_ID")
          .required()
          .doc("written on every volume so clusters sharing a project stay apart");

  /**
   * The cluster id as given, at most 255 characters: it is metadata on every volume, snapshot and
   * backup, and Cinder keeps 255 characters of a metadata value (the project's cut of longer text
   * must never reach what identifies a volume).
   */
  static String clusterId(String id) {
    if (id.length() > org.standalonecinder.provisioner.cinder.CinderText.MAX) {
      throw new IllegalArgumentException(
          "at most "
              + org.standalonecinder.provisioner.cinder.CinderText.MAX
              + " characters (Cinder keeps no more of a metadata value), not "
              + id.length());
    }
    return id;
  }

  static final Setting<String> IDENTITY =
      Setting.text("--identity")
          .env("PROVISIONER_IDENTITY")
          .shownDefault("the cluster id")
          .doc("written on every PV; only such PVs are deleted");

  static final Setting<List<String>> ADOPT_IDENTITIES =
      Setting.list("--adopt-identities")
          .env("ADOPT_IDENTITIES")
          .shownDefault("none")
          .doc(
              "identities of the Go standalone-cinder (its -id) whose released PVs this one deletes"
                  + " as that one did: volume, export and CHAP Secret (docs/migration.md)");

  static final Setting<String> INITIATOR_NAME =
      Setting.of("--initiator-name", ProvisionerSettings::initiatorName)
          .env("INITIATOR_NAME")
          .required()
          .doc("the nodes' iSCSI initiator IQN, sent to Cinder and written into PVs");

  static final Setting<String> CONNECTOR_IP =
      Setting.text("--connector-ip")
          .env("POD_IP")
          .byDefault("127.0.0.1")
          .doc("the address Cinder records for exports");

  static final Setting<String> NAMESPACE =
      Setting.text("--namespace")
          .env("POD_NAMESPACE")
          .byDefault("standalone-cinder")
          .doc("the provisioner's own namespace, where CHAP Secrets and the Lease are kept");

  static final Setting<Boolean> MULTIPATH =
      Setting.onOff("--multipath")
          .env("MULTIPATH")
          .byDefault("false")
          .doc("ask Cinder for every portal");

  static final Setting<List<String>> WWPNS =
      Setting.list("--wwpns")
          .then(l -> ProvisionerSettings.fibreChannelNames("WWPN", l))
          .env("WWPNS")
          .shownDefault("none")
          .doc(
              "Fibre Channel: the nodes' HBA port names (16 hex digits each, colons allowed), sent"
                  + " to Cinder so its FC driver can zone and map the volume");

  static final Setting<List<String>> WWNNS =
      Setting.list("--wwnns")
          .then(l -> ProvisionerSettings.fibreChannelNames("WWNN", l))
          .env("WWNNS")
          .shownDefault("none")
          .doc("Fibre Channel: the HBAs' node names");

  static final Setting<Optional<RbdForm>> RBD_FORM =
      Setting.of(
              "--rbd-form",
              t ->
                  "auto".equalsIgnoreCase(t.trim())
                      ? Optional.<RbdForm>empty()
                      : Optional.of(RbdForm.parse(t)))
          .env("RBD_FORM")
          .byDefault("auto")
          .doc(
              "Ceph RBD volumes become in-tree rbd PVs (Kubernetes up to 1.30) or static ceph-csi"
                  + " csi PVs (1.31 and later); auto asks the API server's version; a class's"
                  + " rbdForm wins");

  static final Setting<Boolean> ISCSI_CHAP_OPTIONAL =
      Setting.of(
              "--iscsi-chap",
              t ->
                  switch (t.trim().toLowerCase(java.util.Locale.ROOT)) {
                    case "required" -> false;
                    case "optional" -> true;
                    default ->
                        throw new IllegalArgumentException(
                            "must be required or optional, was '" + t + "'");
                  })
          .env("ISCSI_CHAP")
          .byDefault("required")
          .doc(
              "required: an iSCSI export without CHAP is refused with a final event and undone"
                  + " (any pod that reaches the portal could log in to it); optional: allowed, for"
                  + " a storage network closed to pods; a class's iscsiChap wins");

  static final Setting<String> CEPHX_SECRET =
      Setting.of("--cephx-secret", RbdDefaults::cephxSecret)
          .env("CEPHX_SECRET")
          .shownDefault("none")
          .doc(
              "Ceph RBD: the Secret in --namespace with the cephx key ('key') of the user Cinder"
                  + " names, and optionally 'userID'; a class's cephxSecret wins");

  static final Setting<String> CEPH_CLUSTER_ID =
      Setting.text("--ceph-cluster-id")
          .env("CEPH_CLUSTER_ID")
          .shownDefault("none")
          .doc("ceph-csi's clusterID for csi PVs; a class's cephClusterID wins");

  static final Setting<String> CEPH_CSI_DRIVER =
      Setting.of("--ceph-csi-driver", RbdDefaults::csiDriver)
          .env("CEPH_CSI_DRIVER")
          .byDefault(RbdOptions.DEFAULT_CSI_DRIVER)
          .doc("ceph-csi's RBD driver name");

  static final Setting<String> RBD_IMAGE_FEATURES =
      Setting.of("--rbd-image-features", RbdDefaults::imageFeatures)
          .env("RBD_IMAGE_FEATURES")
          .byDefault(RbdOptions.DEFAULT_IMAGE_FEATURES)
          .doc("the imageFeatures attribute of csi PVs");

  static final Setting<Integer> WORKERS =
      Setting.integer("--workers", 1, 64)
          .env("WORKERS")
          .byDefault("4")
          .doc("claims and volumes worked on at once");

  static final Setting<Integer> RESYNC_SECONDS =
      Setting.integer("--resync-seconds", 10, Integer.MAX_VALUE)
          .env("RESYNC_SECONDS")
          .byDefault("300")
          .doc("how often every claim and volume is looked at again");

  static final Setting<String> HEALTH_ADDRESS =
      Setting.text("--health-address")
          .env("HEALTH_ADDRESS")
          .byDefault("0.0.0.0")
          .doc("address of /healthz, /readyz (ready once caches are synced) and /metrics");

  static final Setting<Integer> HEALTH_PORT =
      Setting.port("--health-port")
          .env("HEALTH_PORT")
          .byDefault("8080")
          .doc("port of /healthz, /readyz and /metrics");

  static final Setting<Path> RESOLVER_TOKEN_FILE =
      Setting.path("--resolver-token-file")
          .env("RESOLVER_TOKEN_FILE")
          .shownDefault("not served")
          .doc(
              "serve the webhook's clone check, with the token in this file (written 0600 with a"
                  + " new random token when missing)");

  static final Setting<String> RESOLVER_LISTEN =
      Setting.of("--resolver-listen", SharedSettings::loopback)
          .env("RESOLVER_LISTEN")
          .byDefault("127.0.0.1")
          .doc("the clone check's address, loopback only");

  static final Setting<Integer> RESOLVER_PORT =
      Setting.port("--resolver-port")
          .env("RESOLVER_PORT")
          .byDefault("8090")
          .doc("the clone check's port");

  static final Setting<Boolean> LEADER_ELECT =
      Setting.onOff("--leader-elect")
          .env("LEADER_ELECT")
          .byDefault("true")
          .doc(
              "run as one of several replicas: only the holder of a Lease in --namespace acts, the"
                  + " others stand by; false: act alone (never run two such replicas)");

  static final Setting<String> LEASE_NAME =
      Setting.text("--lease-name")
          .env("LEASE_NAME")
          .byDefault(ProvisionerApp.Election.DEFAULT_LEASE)
          .doc("the Lease; one per provisioner deployment");

  static final Setting<Integer> LEASE_DURATION_SECONDS =
      Setting.integer("--lease-duration-seconds", 1, 3600)
          .env("LEASE_DURATION_SECONDS")
          .byDefault("15")
          .doc("a standby takes over this long after the leader's last renewal");

  static final Setting<Integer> RENEW_DEADLINE_SECONDS =
      Setting.integer("--renew-deadline-seconds", 1, 3600)
          .env("RENEW_DEADLINE_SECONDS")
          .byDefault("10")
          .doc(
              "the leader stops acting, and exits, when it could not renew for this long, always"
                  + " before the lease lapses");

  static final Setting<Integer> RETRY_PERIOD_SECONDS =
      Setting.integer("--retry-period-seconds", 1, 3600)
          .env("RETRY_PERIOD_SECONDS")
          .byDefault("2")
          .doc("how often replicas try to take or renew the Lease");

  static final Setting<String> INSTANCE =
      Setting.text("--instance")
          .env("POD_NAME")
          .shownDefault("host name and pid")
          .doc("this replica's name in the Lease and in events");

  static final SettingsTable TABLE =
      new SettingsTable(
          List.of(
              SharedSettings.CLOUD_CONFIG,
              CLUSTER_ID,
              INITIATOR_NAME,
              SharedSettings.PROVISIONER_NAME,
              IDENTITY,
              ADOPT_IDENTITIES,
              NAMESPACE,
              CONNECTOR_IP,
              MULTIPATH,
              WWPNS,
              WWNNS,
              ISCSI_CHAP_OPTIONAL,
              CEPHX_SECRET,
              RBD_FORM,
              CEPH_CLUSTER_ID,
              CEPH_CSI_DRIVER,
              RBD_IMAGE_FEATURES,
              SharedSettings.ZONE_LABEL,
              WORKERS,
              LimitSettings.MAX_COPIES,
              LimitSettings.MAX_COPIES_PER_NAMESPACE,
              LimitSettings.MAX_BACKUPS,
              LimitSettings.MAX_BACKUPS_PER_NAMESPACE,
              LimitSettings.MAX_SNAPSHOTS_PER_CLAIM,
              LimitSettings.MAX_SNAPSHOTS_PER_NAMESPACE,
              RESYNC_SECONDS,
              HEALTH_ADDRESS,
              HEALTH_PORT,
              SharedSettings.KUBECONFIG,
              RESOLVER_TOKEN_FILE,
              RESOLVER_LISTEN,
              RESOLVER_PORT,
              LEADER_ELECT,
              LEASE_NAME,
              LEASE_DURATION_SECONDS,
              RENEW_DEADLINE_SECONDS,
              RETRY_PERIOD_SECONDS,
              INSTANCE));

  /**
   * What the settings make together.
   *
   * @param election null without leader election
   * @param resolver null when the clone check is not served
   * @param instance null: the host name and process id
   */
  record Run(
      ProvisionerSettings settings,
      CloudConfig cloud,
      ProvisionerApp.Election election,
      ProvisionerApp.Resolver resolver,
      int workers,
      CopyLimits copies,
      SnapshotLimits backups,
      Duration resync,
      String healthAddress,
      int healthPort,
      Path kubeconfig,
      String instance) {}

  /** Who this provisioner is and how it exports, or null when a value is wrong. */
  private static ProvisionerSettings settings(Values v, CloudConfig cloud, String clusterId) {
    return v.problems().isEmpty()
        ? v.attempt(
            null,
            () ->
                new ProvisionerSettings(
                    v.get(SharedSettings.PROVISIONER_NAME),
                    v.given(IDENTITY) ? v.get(IDENTITY) : clusterId,
                    clusterId,
                    v.get(INITIATOR_NAME),
                    "standalone-cinder-" + clusterId,
                    v.get(CONNECTOR_IP),
                    v.get(NAMESPACE),
                    v.get(MULTIPATH),
                    v.get(WWPNS) == null ? List.of() : v.get(WWPNS),
                    v.get(WWNNS) == null ? List.of() : v.get(WWNNS),
                    new RbdDefaults(
                        v.get(RBD_FORM).orElse(null),
                        v.get(CEPHX_SECRET),
                        v.get(CEPH_CLUSTER_ID),
                        v.get(CEPH_CSI_DRIVER),
                        v.get(RBD_IMAGE_FEATURES)),
                    SharedSettings.topology(v, cloud),
                    v.get(ISCSI_CHAP_OPTIONAL),
                    v.get(ADOPT_IDENTITIES) == null
                        ? java.util.Set.of()
                        : java.util.Set.copyOf(v.get(ADOPT_IDENTITIES))))
        : null;
  }

  /** The leader election asked for, or null. */
  private static ProvisionerApp.Election election(Values v) {
    return Boolean.TRUE.equals(v.get(LEADER_ELECT))
            && v.get(LEASE_DURATION_SECONDS) != null
            && v.get(RENEW_DEADLINE_SECONDS) != null
            && v.get(RETRY_PERIOD_SECONDS) != null
        ? v.attempt(
            null,
            () ->
                new ProvisionerApp.Election(
                    v.get(LEASE_NAME),
                    Duration.ofSeconds(v.get(LEASE_DURATION_SECONDS)),
                    Duration.ofSeconds(v.get(RENEW_DEADLINE_SECONDS)),
                    Duration.ofSeconds(v.get(RETRY_PERIOD_SECONDS))))
        : null;
  }

  /** The clone check the webhook asks, or null when not asked for. */
  private static ProvisionerApp.Resolver resolver(Values v) {
    Path tokenFile = v.get(RESOLVER_TOKEN_FILE);
    if (tokenFile != null) {
      try {
        return new ProvisionerApp.Resolver(
            v.get(RESOLVER_LISTEN), v.get(RESOLVER_PORT), ResolverCommand.token(tokenFile));
      } catch (IOException e) {
        v.problem(RESOLVER_TOKEN_FILE.flag() + " " + tokenFile + ": " + e.getMessage());
      }
    }
    return null;
  }

  /** What the values make, or null when {@link Values#problems()} says why not. */
  static Run run(Values v, Map<String, String> env) {
    CloudConfig cloud = SharedSettings.cloud(v, env);
    String clusterId = v.get(CLUSTER_ID);
    ProvisionerSettings settings = settings(v, cloud, clusterId);
    ProvisionerApp.Election election = election(v);
    ProvisionerApp.Resolver resolver = resolver(v);
    if (!v.problems().isEmpty()) {
      return null;
    }
    return new Run(
        settings,
        cloud,
        election,
        resolver,
        v.get(WORKERS),
        LimitSettings.copies(v),
        LimitSettings.backups(v),
        Duration.ofSeconds(v.get(RESYNC_SECONDS)),
        v.get(HEALTH_ADDRESS),
        v.get(HEALTH_PORT),
        v.get(SharedSettings.KUBECONFIG),
        v.get(INSTANCE));
  }
}
