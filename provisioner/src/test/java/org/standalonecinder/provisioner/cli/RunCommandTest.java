package org.standalonecinder.provisioner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
        "no cluster id | --initiator-name=iqn.2026-11.org.x:k8s | Missing required option: '--cluster-id",
        "no initiator | --cluster-id=c1 | Missing required option: '--initiator-name",
        "initiator not an IQN | --cluster-id=c1 --initiator-name=node-1 | 'node-1' is not an iSCSI qualified name",
        "workers out of range | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --workers=0 | --workers must be between 1 and 64",
        "resync too short | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --resync-seconds=1 | --resync-seconds must be at least 10",
        "bad cloud config | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --cloud-config=CONF | unknown key 'tenant_id'",
        "a WWPN that is none | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --wwpns=10:00:00:00:c9:a1:b2:c3,nope | WWPN 'nope' is not a Fibre Channel name of 16 hex digits",
        "an RBD form that is none | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --rbd-form=krbd | RBD form 'krbd' is neither rbd (in-tree, Kubernetes up to 1.30) nor csi",
        "a cephx Secret that is no name | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --cephx-secret=Ceph_X | cephx Secret 'Ceph_X' is not a Secret name",
        "a ceph-csi driver that is no name | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --ceph-csi-driver=rbd/csi | ceph-csi driver 'rbd/csi' is not a CSI driver name",
        "image features that are no list | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --rbd-image-features=layering;rm | RBD image features 'layering;rm' are not a comma-separated list",
        "a lease shorter than its renewal | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --lease-duration-seconds=5 --renew-deadline-seconds=10 | leader election needs lease duration > renew deadline > retry period > 0, was 5 s, 10 s, 2 s",
        "a clone check off loopback | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --resolver-token-file=TOKEN --resolver-listen=0.0.0.0 | --resolver-listen must be a loopback address, was 0.0.0.0",
        "a clone check token too short | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --resolver-token-file=SHORT | --resolver-token-file SHORT: holds no token of at least 16 characters",
        "a zone label that is no label key | --cluster-id=c1 --initiator-name=iqn.2026-11.org.x:k8s --cloud-config=GOOD --zone-label=Zone! | --zone-label: 'Zone!' is not a label key",
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
    for (String a : args.trim().split(" ")) {
      argv.add(
          a.replace("CONF", conf.toString())
              .replace("GOOD", good.toString())
              .replace("TOKEN", dir.resolve("token").toString())
              .replace("SHORT", shortToken.toString()));
    }
    message = message.replace("SHORT", shortToken.toString());
    StringWriter err = new StringWriter();
    ByteArrayOutputStream stderr = new ByteArrayOutputStream();
    PrintStream old = System.err;
    int code;
    try {
      System.setErr(new PrintStream(stderr, true, StandardCharsets.UTF_8));
      code =
          new CommandLine(new RunCommand())
              .setErr(new PrintWriter(err, true))
              .execute(argv.toArray(String[]::new));
    } finally {
      System.setErr(old);
    }
    assertThat(err + stderr.toString(StandardCharsets.UTF_8)).contains(message);
    assertThat(code).isEqualTo(2);
  }
}
