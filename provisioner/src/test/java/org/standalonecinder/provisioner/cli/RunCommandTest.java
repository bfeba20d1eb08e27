package org.standalonecinder.provisioner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

/** {@code run} refuses bad settings before it starts anything, naming what is wrong. */
class RunCommandTest {

  @TempDir Path dir;

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "no cluster id | --initiator-name=iqn.2026-11.org.x:k8s | --cluster-id (or env CLUSTER_ID) is required",
        "no initiator | --cluster-id=c1 | --initiator-name (or env INITIATOR_NAME) is required",
        "a cluster id past what Cinder keeps | --cluster-id=LONGID --initiator-name=iqn.2026-11.org.x:k8s | --cluster-id: at most 255 characters (Cinder keeps no more of a metadata value), not 256",
        "initiator not an IQN | --cluster-id=c1 --initiator-name=node-1 | --initiator-name: initiator name 'node-1' is not an iSCSI qualified name such as iqn.2026-11.org.example:k8s",
        "workers out of range | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --workers=0 | --workers: must be between 1 and 64, was 0",
        "resync too short | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --resync-seconds=1 | --resync-seconds: must be at least 10, was 1",
        "bad cloud config | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --cloud-config=CONF | CONF: unknown key 'tenant_id' in [Global]; did you mean 'tenant-id'?",
        "a WWPN that is none | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --wwpns=10:00:00:00:c9:a1:b2:c3,nope | --wwpns: WWPN 'nope' is not a Fibre Channel name of 16 hex digits (e.g. 10:00:00:00:c9:a1:b2:c3)",
        "an RBD form that is none | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --rbd-form=krbd | --rbd-form: RBD form 'krbd' is neither rbd (in-tree, Kubernetes up to 1.30) nor csi (ceph-csi)",
        "a cephx Secret that is no name | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --cephx-secret=Ceph_X | --cephx-secret: cephx Secret 'Ceph_X' is not a Secret name (a DNS subdomain)",
        "a ceph-csi driver that is no name | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --ceph-csi-driver=rbd/csi | --ceph-csi-driver: ceph-csi driver 'rbd/csi' is not a CSI driver name such as rbd.csi.ceph.com",
        "image features that are no list | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --rbd-image-features=layering;rm | --rbd-image-features: RBD image features 'layering;rm' are not a comma-separated list such as layering,exclusive-lock",
        "a lease shorter than its renewal | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --lease-duration-seconds=5 --renew-deadline-seconds=10 | leader election needs lease duration > renew deadline > retry period > 0, was 5 s, 10 s, 2 s",
        "a clone check off loopback | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --resolver-token-file=TOKEN --resolver-listen=0.0.0.0 | --resolver-listen: must be a loopback address, was 0.0.0.0",
        "a clone check token too short | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --resolver-token-file=SHORT | --resolver-token-file SHORT: holds no token of at least 16 characters",
        "a zone label that is no label key | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --zone-label=Zone! | --zone-label: 'Zone!' is not a label key such as topology.kubernetes.io/zone",
        "a clone check token in no folder | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --resolver-token-file=/nonexistent/token | --resolver-token-file /nonexistent/token: "
      })
  void refusesBadSettings(String name, String args, String message) throws Exception {
    Path conf = Files.writeString(dir.resolve("cloud.conf"), "[Global]\ntenant_id = x\n");
    Path shortToken = Files.writeString(dir.resolve("short"), "abc\n");
    Path good =
        Files.writeString(
            dir.resolve("good.conf"),
            "[Global]\ncinder-endpoint = http://127.0.0.1:1/v3\ntenant-id = 0abc\n");
    List<String> argv = new ArrayList<>();
    if (!args.contains("--cloud-config")) {
      // A good cloud config unless the row's is bad: no row passes on the missing one's complaint.
      argv.add("--cloud-config=" + good);
    }
    for (String a : args.trim().split(" ")) {
      argv.add(
          a.replace("CONF", conf.toString())
              .replace("GOOD", good.toString())
              .replace("TOKEN", dir.resolve("token").toString())
              .replace("SHORT", shortToken.toString())
              .replace("LONGID", "c".repeat(256)));
    }
    message = message.replace("SHORT", shortToken.toString()).replace("CONF", conf.toString());
    StringWriter err = new StringWriter();
    RunCommand run = new RunCommand();
    run.env = Map.of();
    int code =
        new CommandLine(run)
            .setErr(new PrintWriter(err, true))
            .execute(argv.toArray(String[]::new));
    // One line, naming only what is wrong: another setting's complaint would fail the row.
    assertThat(err.toString().lines())
        .singleElement()
        .asString()
        .startsWith("standalone-cinder run: " + message);
    assertThat(code).isEqualTo(2);
  }

  @org.junit.jupiter.api.Test
  void aDeploymentsVariablesMakeTheSettingsWithTheDefaultsFilledIn() throws Exception {
    Path good =
        Files.writeString(
            dir.resolve("good.conf"),
            "[Global]\ncinder-endpoint = http://127.0.0.1:1/v3\ntenant-id = 0abc\n");
    Map<String, String> env =
        Map.of(
            "CLOUD_CONFIG", good.toString(),
            "CLUSTER_ID", "prod-1",
            "INITIATOR_NAME", "iqn.2026-11.org.example:prod-1",
            "WORKERS", "8",
            // An empty value, as a Deployment's value: "" leaves it, is the default.
            "ISCSI_CHAP", "",
            "LEADER_ELECT", "false",
            "WWPNS", "10:00:00:00:C9:A1:B2:C3");
    org.standalonecinder.api.settings.Values v = RunSettings.TABLE.read(Map.of(), env);
    RunSettings.Run run = RunSettings.run(v, env);
    assertThat(v.problems()).isEmpty();
    assertThat(run.workers()).isEqualTo(8);
    assertThat(run.settings().identity()).as("the cluster id by default").isEqualTo("prod-1");
    assertThat(run.settings().iscsiChapOptional()).isFalse();
    assertThat(run.settings().wwpns()).containsExactly("10000000c9a1b2c3");
    assertThat(run.settings().secretNamespace()).isEqualTo("standalone-cinder");
    assertThat(run.election()).isNull();
    assertThat(run.resolver()).isNull();
    assertThat(run.resync()).isEqualTo(java.time.Duration.ofMinutes(5));
  }

  @org.junit.jupiter.api.Test
  void everyBadSettingIsReportedAtOnce() {
    StringWriter err = new StringWriter();
    RunCommand run = new RunCommand();
    run.env = Map.of("RBD_FORM", "krbd");
    int code =
        new CommandLine(run)
            .setErr(new PrintWriter(err, true))
            .execute("--workers=0", "--resync-seconds=1");
    assertThat(err.toString().lines())
        .containsExactly(
            "standalone-cinder run: --cluster-id (or env CLUSTER_ID) is required",
            "standalone-cinder run: --initiator-name (or env INITIATOR_NAME) is required",
            "standalone-cinder run: --rbd-form (env RBD_FORM): RBD form 'krbd' is neither rbd"
                + " (in-tree, Kubernetes up to 1.30) nor csi (ceph-csi)",
            "standalone-cinder run: --workers: must be between 1 and 64, was 0",
            "standalone-cinder run: --resync-seconds: must be at least 10, was 1",
            "standalone-cinder run: no cloud configured: set [Global] auth-url (Keystone) or"
                + " [Global] cinder-endpoint (Cinder with noauth), in cloud.conf, as OS_AUTH_URL /"
                + " OS_CINDER_ENDPOINT, or through OS_CLOUD and clouds.yaml");
    assertThat(code).isEqualTo(2);
  }
}
