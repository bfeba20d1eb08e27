package org.standalonecinder.provisioner.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.api.settings.SettingsTable;

/**
 * docs/provisioner.md lists each command's settings exactly as its table has them: every row of the
 * table is in the docs, and the docs name no flag the table lacks.
 */
class SettingsDocsTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource({"run, '## Running it'", "resolver, '### The resolver'"})
  void theDocsListEverySettingAsTheTableHasIt(String command, String heading) throws Exception {
    SettingsTable table = command.equals("run") ? RunSettings.TABLE : ResolverCommand.TABLE;
    String doc = Files.readString(Path.of("..", "docs", "provisioner.md"));
    int start = doc.indexOf(heading);
    assertThat(start).as("the docs have a section %s", heading).isNotNegative();
    // The section runs to the next heading of its level or above, its subsections included.
    String level = heading.substring(0, heading.indexOf(' '));
    java.util.regex.Matcher next =
        java.util.regex.Pattern.compile("\n#{1," + level.length() + "} ")
            .matcher(doc)
            .region(start + heading.length(), doc.length());
    int end = next.find() ? next.start() : -1;
    List<String> documented =
        doc.substring(start, end < 0 ? doc.length() : end)
            .lines()
            .filter(l -> l.startsWith("| `--"))
            .toList();
    assertThat(documented).containsExactlyInAnyOrderElementsOf(table.markdown());
  }

  /** Read by the logging set-up, not by the table. */
  private static final java.util.Set<String> LOGGING = java.util.Set.of("LOG_FORMAT", "LOG_LEVEL");

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "kustomize's settings.env, set or commented out | manifests/base/settings.env | ^#?\\s*([A-Z][A-Z_]+)=",
        "the chart's settings, as values.yaml lists them | charts/standalone-cinder/values.yaml | ^#\\s+([A-Z][A-Z_]+):\\s",
      })
  void theManifestsOfferOnlyVariablesTheProvisionerReads(String name, String file, String pattern)
      throws Exception {
    java.util.regex.Pattern p = java.util.regex.Pattern.compile(pattern);
    List<String> offered =
        Files.readString(Path.of("..", file))
            .lines()
            .map(p::matcher)
            .filter(java.util.regex.Matcher::find)
            .map(m -> m.group(1))
            .toList();
    assertThat(offered).as("variables in %s", file).isNotEmpty();
    java.util.Set<String> known = new java.util.HashSet<>(LOGGING);
    RunSettings.TABLE.settings().stream()
        .filter(s -> s.env() != null)
        .forEach(s -> known.add(s.env()));
    assertThat(offered).allSatisfy(v -> assertThat(known).as("a variable run reads").contains(v));
  }
}
