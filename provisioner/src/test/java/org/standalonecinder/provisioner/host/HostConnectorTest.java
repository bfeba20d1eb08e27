package org.standalonecinder.provisioner.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.provisioner.cinder.Connector;

class HostConnectorTest {

  @TempDir Path root;

  private void file(String path, String content) throws IOException {
    Path f = root.resolve(path);
    Files.createDirectories(f.getParent());
    Files.writeString(f, content);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "Debian's file | ## DO NOT EDIT OR REMOVE THIS FILE!\\nInitiatorName=iqn.1993-08.org.debian:01:abc\\n | iqn.1993-08.org.debian:01:abc",
        "spaces around the name | InitiatorName= iqn.2026-11.org.x:h1 \\n | iqn.2026-11.org.x:h1",
        "a commented-out name first | #InitiatorName=iqn.old\\nInitiatorName=iqn.new\\n | iqn.new",
        "an alias line is not the name | InitiatorAlias=h1\\nInitiatorName=iqn.2026-11.org.x:h1 | iqn.2026-11.org.x:h1"
      })
  void theInitiatorNameComesFromOpenIscsisFile(String name, String content, String initiator)
      throws IOException {
    file(HostConnector.INITIATOR_FILE, content.replace("\\n", "\n"));
    Connector c = HostConnector.discover(root, "h1", "10.0.0.5", true);
    assertThat(c.initiator()).isEqualTo(initiator);
    assertThat(c.toApi())
        .containsEntry("host", "h1")
        .containsEntry("ip", "10.0.0.5")
        .containsEntry("multipath", true)
        .containsEntry("do_local_attach", false)
        .doesNotContainKey("wwpns");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "no file (open-iscsi not installed) | - | install open-iscsi, which writes it)",
        "a file that names none | ## nothing here\\n | install open-iscsi, which writes it)",
        "an empty name | InitiatorName=\\n | is missing or names none"
      })
  void aHostWithoutAnInitiatorNameIsToldWhatToInstall(String name, String content, String message)
      throws IOException {
    if (!content.equals("-")) {
      file(HostConnector.INITIATOR_FILE, content.replace("\\n", "\n"));
    }
    assertThatThrownBy(() -> HostConnector.discover(root, "h1", "10.0.0.5", false))
        .isInstanceOf(HostException.class)
        .hasMessageContaining(
            "this host has no iSCSI initiator name: /etc/iscsi/initiatorname.iscsi")
        .hasMessageContaining(message);
  }

  @Test
  void fibreChannelPortsAreReadFromSysfsAsCinderWantsThem() throws IOException {
    // host2 has a port name and no node name: left out, or the two lists would pair wrongly
    file(HostConnector.INITIATOR_FILE, "InitiatorName=iqn.2026-11.org.x:h1\n");
    Map.of(
            "host3", List.of("0x21000024FF3AB5C2", "0x20000024ff3ab5c2"),
            "host1", List.of("0x10000090fa5d2e01", "0x20000090fa5d2e01"),
            "host7", List.of("not-a-wwn", "0x2000"),
            "host2", List.of("0x10000090fa5d2e99", "-"))
        .forEach(
            (h, names) -> {
              try {
                file("sys/class/fc_host/" + h + "/port_name", names.get(0) + "\n");
                if (!names.get(1).equals("-")) {
                  file("sys/class/fc_host/" + h + "/node_name", names.get(1) + "\n");
                }
              } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
            });
    Connector c = HostConnector.discover(root, "h1", "10.0.0.5", false);
    assertThat(c.wwpns()).containsExactly("10000090fa5d2e01", "21000024ff3ab5c2");
    assertThat(c.wwnns()).containsExactly("20000090fa5d2e01", "20000024ff3ab5c2");
  }
}
