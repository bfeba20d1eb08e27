package org.standalonecinder.api.settings;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** Picocli hands the table each flag's text as written, in each form a flag can take. */
class SettingOptionsTest {

  static final Setting<Boolean> LOCAL =
      Setting.onOff("--local").byDefault("false").doc("on loopback");
  static final Setting<Boolean> ELECT =
      Setting.onOff("--leader-elect").byDefault("true").doc("compete");
  static final Setting<String> OUT = Setting.text("--ca-out").shownDefault("none").doc("where");
  static final Setting<List<String>> SAN = Setting.list("--san").shownDefault("none").doc("names");
  static final SettingsTable TABLE = new SettingsTable(List.of(LOCAL, ELECT, OUT, SAN));

  @Command(name = "t", modelTransformer = SettingOptions.Transformer.class)
  static final class Cmd implements SettingOptions.Configured {
    @Spec CommandSpec spec;

    @Override
    public SettingsTable settings() {
      return TABLE;
    }
  }

  private static Values parse(String args) {
    Cmd c = new Cmd();
    new CommandLine(c).parseArgs(args.isBlank() ? new String[0] : args.trim().split(" "));
    return TABLE.read(SettingOptions.given(c.spec), Map.of());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "nothing given | '' | false | true | | ''",
        "a switch alone is true | --local --ca-out x | true | true | x | ''",
        "a switch set false | --leader-elect=false | false | false | | ''",
        "a switch set true | --local=true | true | true | | ''",
        "a value after a space | --ca-out ca.crt | false | true | ca.crt | ''",
        "a list repeated and comma-separated | --san a,b --san c | false | true | | a;b;c",
      })
  void eachFormOfAFlagReachesTheTable(
      String name, String args, boolean local, boolean elect, String out, String sans) {
    Values v = parse(args);
    assertThat(v.problems()).isEmpty();
    assertThat(v.get(LOCAL)).isEqualTo(local);
    assertThat(v.get(ELECT)).isEqualTo(elect);
    assertThat(v.get(OUT)).isEqualTo(out);
    assertThat(v.get(SAN) == null ? "" : String.join(";", v.get(SAN))).isEqualTo(sans);
  }
}
