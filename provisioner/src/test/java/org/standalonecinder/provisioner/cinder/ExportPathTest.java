package org.standalonecinder.provisioner.cinder;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The one rule for how a volume is exported, by the microversion in use. */
class ExportPathTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "no microversion header,                3.0,  false, RESERVE",
    "attachments API but no os-complete,    3.27, false, RESERVE",
    "just before os-complete,               3.43, false, RESERVE",
    "os-complete,                           3.44, false, ATTACHMENTS",
    "read-only before an attachment's mode, 3.53, true,  RESERVE",
    "read-only with an attachment's mode,   3.54, true,  ATTACHMENTS",
    "Cinder 2023.1,                         3.70, false, ATTACHMENTS",
    "Cinder 2023.1 read-only,               3.70, true,  ATTACHMENTS",
  })
  void theMicroversionChoosesThePath(
      String name, String version, boolean readOnly, ExportPath expected) {
    assertThat(ExportPath.of(Microversion.parse(version), readOnly)).isEqualTo(expected);
  }
}
