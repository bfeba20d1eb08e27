package org.standalonecinder.provisioner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

class ConnectorCommandTest {

  @TempDir Path root;

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          open-iscsi installed          | InitiatorName=iqn.2026-11.org.example:h1 |             | 0 | "initiator" : "iqn.2026-11.org.example:h1"
          multipath asked for           | InitiatorName=iqn.2026-11.org.example:h1 | --multipath | 0 | "multipath" : true
          the host is named as asked    | InitiatorName=iqn.2026-11.org.example:h1 |             | 0 | "host" : "node-7"
          never a local attach by Cinder | InitiatorName=iqn.2026-11.org.example:h1 |            | 0 | "do_local_attach" : false
          no open-iscsi                 |                                          |             | 6 | install open-iscsi
          """)
  void theConnectorIsWhatCinderIsTold(
      String name, String initiatorFile, String flag, int exit, String expected)
      throws IOException {
    if (initiatorFile != null) {
      Path etc = Files.createDirectories(root.resolve("etc/iscsi"));
      Files.writeString(etc.resolve("initiatorname.iscsi"), "## comment\n" + initiatorFile + "\n");
    }
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    String[] args =
        flag == null
            ? new String[] {
              "cinder", "connector", "--host-root", root.toString(), "--host-name", "node-7"
            }
            : new String[] {
              "cinder", "connector", "--host-root", root.toString(), "--host-name", "node-7", flag
            };
    int code =
        new CommandLine(new Main())
            .setOut(new PrintWriter(out, true))
            .setErr(new PrintWriter(err, true))
            .execute(args);

    assertThat(code).isEqualTo(exit);
    assertThat(out.toString() + err).contains(expected);
  }
}
