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

/** {@code resolver} refuses bad settings before it starts anything, naming what is wrong. */
class ResolverCommandTest {

  @TempDir Path dir;

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a zone label that is no label key | --cloud-config=GOOD --token-file=TOKEN --zone-label=Zone! | --zone-label: 'Zone!' is not a label key such as topology.kubernetes.io/zone",
        "a bad cloud config | --cloud-config=BAD --token-file=TOKEN | BAD: unknown key 'tenant_id' in [Global]; did you mean 'tenant-id'?",
        "an address off loopback | --cloud-config=GOOD --token-file=TOKEN --listen=0.0.0.0 | --listen: must be a loopback address, was 0.0.0.0",
        "no token file | --cloud-config=GOOD | --token-file is required",
        "a port that is none | --cloud-config=GOOD --token-file=TOKEN --port=70000 | --port: must be between 0 and 65535, was 70000",
      })
  void refusesBadSettings(String name, String args, String message) throws Exception {
    Path good =
        Files.writeString(
            dir.resolve("good.conf"),
            "[Global]\ncinder-endpoint = http://127.0.0.1:1/v3\ntenant-id = 0abc\n");
    Path bad = Files.writeString(dir.resolve("bad.conf"), "[Global]\ntenant_id = x\n");
    List<String> argv = new ArrayList<>();
    for (String a : args.trim().split(" ")) {
      argv.add(
          a.replace("GOOD", good.toString())
              .replace("BAD", bad.toString())
              .replace("TOKEN", dir.resolve("token").toString()));
    }
    StringWriter err = new StringWriter();
    ResolverCommand command = new ResolverCommand();
    command.env = Map.of();
    int code =
        new CommandLine(command)
            .setErr(new PrintWriter(err, true))
            .execute(argv.toArray(String[]::new));
    // One line, naming only what is wrong: another setting's complaint would fail the row.
    assertThat(err.toString().lines())
        .containsExactly("standalone-cinder resolver: " + message.replace("BAD", bad.toString()));
    assertThat(code).isEqualTo(2);
  }
}
