package org.standalonecinder.provisioner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.provisioner.cinder.openstack.LocalCinder;
import picocli.CommandLine;

/**
 * The diagnostic against the real local Cinder, both APIs, from a cloud.conf as a user writes it.
 */
class CheckCommandIT {

  @TempDir Path dir;

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "noauth, 0, endpoint        ok    http://127.0.0.1:8776/v3/",
    "keystone, 0, endpoint        ok    http://127.0.0.1:8777/v3/",
    "keystone with a wrong password, 3, authentication  FAIL  Keystone authentication",
    "keystone in another region, 4, in region RegionTwo"
  })
  void check(String mode, int exit, String line) throws IOException {
    Map<String, String> e = LocalCinder.env();
    String ini =
        mode.equals("noauth")
            ? "[Global]\ncinder-endpoint = "
                + e.get("CINDER_ENDPOINT")
                + "\ntenant-id = "
                + e.get("CINDER_PROJECT_ID")
                + "\n"
            : "[Global]\nauth-url = "
                + e.get("OS_AUTH_URL")
                + "\nusername = "
                + e.get("OS_USERNAME")
                + "\npassword = \""
                + (mode.contains("wrong password") ? "wrong" : e.get("OS_PASSWORD"))
                + "\"\ntenant-name = "
                + e.get("OS_PROJECT_NAME")
                + "\ndomain-name = Default\nregion = "
                + (mode.contains("region") ? "RegionTwo" : e.get("OS_REGION_NAME"))
                + "\n";
    Path conf = Files.writeString(dir.resolve("cloud.conf"), ini);
    CheckCommand cmd = new CheckCommand();
    cmd.cloud.env = Map.of();
    StringWriter out = new StringWriter();
    int code =
        new CommandLine(cmd)
            .setOut(new PrintWriter(out, true))
            .execute("--cloud-config", conf.toString());
    assertThat(out.toString()).contains(line);
    assertThat(code).as(out.toString()).isEqualTo(exit);
    if (exit == 0) {
      // One pool per backend the lab runs: file (iSCSI) and, in CI, rbd (Ceph).
      List<String> backends = List.of(LocalCinder.env().get("CINDER_BACKEND").split(","));
      assertThat(out.toString())
          .contains("pools           ok    " + backends.size() + " pool(s)", "protocol iSCSI");
      if (backends.contains("rbd")) {
        assertThat(out.toString()).contains("protocol ceph");
      }
    }
  }

  @org.junit.jupiter.api.Test
  void poolsListsEveryPoolOfTheRealCinder() throws IOException {
    Map<String, String> e = LocalCinder.env();
    Path conf =
        Files.writeString(
            dir.resolve("pools.conf"),
            "[Global]\ncinder-endpoint = "
                + e.get("CINDER_ENDPOINT")
                + "\ntenant-id = "
                + e.get("CINDER_PROJECT_ID")
                + "\n");
    PoolsCommand cmd = new PoolsCommand();
    cmd.cloud.env = Map.of();
    StringWriter out = new StringWriter();
    int code =
        new CommandLine(cmd)
            .setOut(new PrintWriter(out, true))
            .execute("--cloud-config", conf.toString());
    assertThat(code).as(out.toString()).isZero();
    List<String> backends = List.of(e.get("CINDER_BACKEND").split(","));
    assertThat(out.toString().lines().skip(1).toList()).hasSize(backends.size());
    // Free as Cinder reports it: below zero on a thin pool provisioned past its size.
    assertThat(out.toString()).containsPattern("@file#file +iSCSI +[0-9.]+ GiB +-?[0-9.]+ GiB");
    if (backends.contains("rbd")) {
      assertThat(out.toString()).containsPattern("@rbd#rbd +ceph +[0-9.]+ GiB");
    }
  }
}
