package org.standalonecinder.provisioner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

/** {@code resolver} refuses bad settings before it starts anything, naming what is wrong. */
class ResolverCommandTest {

  @TempDir Path dir;

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a zone label that is no label key | GOOD | --zone-label=Zone! | --zone-label: 'Zone!' is not a label key",
        "a bad cloud config | BAD | --zone-label=topology.kubernetes.io/zone | unknown key 'tenant_id'"
      })
  void refusesBadSettings(String name, String conf, String flag, String message) throws Exception {
    Path good =
        Files.writeString(
            dir.resolve("good.conf"),
            "[Global]\ncinder-endpoint = http://127.0.0.1:1/v3\ntenant-id = 0abc\n");
    Path bad = Files.writeString(dir.resolve("bad.conf"), "[Global]\ntenant_id = x\n");
    StringWriter err = new StringWriter();
    int code =
        new CommandLine(new ResolverCommand())
            .setErr(new PrintWriter(err, true))
            .execute(
                "--cloud-config=" + (conf.equals("GOOD") ? good : bad),
                "--token-file=" + dir.resolve("token"),
                flag);
    assertThat(err.toString()).contains(message);
    assertThat(code).isEqualTo(2);
  }
}
