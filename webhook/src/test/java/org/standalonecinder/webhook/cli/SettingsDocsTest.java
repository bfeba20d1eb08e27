package org.standalonecinder.webhook.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * docs/webhook.md lists {@code serve}'s settings exactly as its table has them: every row of the
 * table is in the docs, and the docs name no flag the table lacks.
 */
class SettingsDocsTest {

  @Test
  void theDocsListEverySettingAsTheTableHasIt() throws Exception {
    String doc = Files.readString(Path.of("..", "docs", "webhook.md"));
    String heading = "### serve's settings";
    int start = doc.indexOf(heading);
    assertThat(start).as("the docs have a section %s", heading).isNotNegative();
    int end = doc.indexOf("\n#", start + heading.length());
    List<String> documented =
        doc.substring(start, end < 0 ? doc.length() : end)
            .lines()
            .filter(l -> l.startsWith("| `--"))
            .toList();
    assertThat(documented).containsExactlyInAnyOrderElementsOf(ServeSettings.TABLE.markdown());
  }
}
