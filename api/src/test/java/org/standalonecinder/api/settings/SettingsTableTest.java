package org.standalonecinder.api.settings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Where a setting's value comes from, and what is said when it is wrong. */
class SettingsTableTest {

  static final Setting<Integer> WORKERS =
      Setting.integer("--workers", 1, 64).env("WORKERS").byDefault("4").doc("at once");
  static final Setting<String> CLUSTER =
      Setting.text("--cluster-id").env("CLUSTER_ID").required().doc("the cluster");
  static final Setting<Integer> RESYNC =
      Setting.integer("--resync-seconds", 10, Integer.MAX_VALUE).byDefault("300").doc("again");
  static final Setting<Boolean> MULTIPATH =
      Setting.onOff("--multipath").env("MULTIPATH").byDefault("false").doc("every portal");
  static final Setting<List<String>> NAMES =
      Setting.list("--name").env("NAMES").shownDefault("none").doc("names");
  static final SettingsTable TABLE =
      new SettingsTable(List.of(WORKERS, CLUSTER, RESYNC, MULTIPATH, NAMES));

  private static Map<String, String> pairs(String text) {
    Map<String, String> m = new HashMap<>();
    if (text != null) {
      for (String pair : text.split(" ")) {
        String[] kv = pair.split("=", 2);
        m.put(kv[0], kv[1]);
      }
    }
    return m;
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      nullValues = "-",
      value = {
        "the default without flag or variable | - | - | 4",
        "the variable beats the default | - | WORKERS=8 | 8",
        "the flag beats the variable | --workers=2 | WORKERS=8 | 2",
        "a blank flag counts as not given | --workers=  | WORKERS=8 | 8",
        "a blank variable counts as not set | - | WORKERS= | 4",
      })
  void aValueComesFromTheFlagThenTheVariableThenTheDefault(
      String name, String flags, String env, int workers) {
    Map<String, String> given = pairs(flags);
    given.putIfAbsent("--cluster-id", "c1");
    Values v = TABLE.read(given, pairs(env));
    assertThat(v.problems()).isEmpty();
    assertThat(v.get(WORKERS)).isEqualTo(workers);
    assertThat(v.given(WORKERS))
        .isEqualTo(flags != null && !flags.endsWith("=") || env != null && !env.endsWith("="));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      nullValues = "-",
      value = {
        "a required setting missing | - | - | --cluster-id (or env CLUSTER_ID) is required",
        "out of range, by flag | --cluster-id=c --workers=0 | - | --workers: must be between 1 and 64, was 0",
        "out of range, by variable | --cluster-id=c | WORKERS=65 | --workers (env WORKERS): must be between 1 and 64, was 65",
        "not a number | --cluster-id=c --workers=four | - | --workers: 'four' is not a whole number",
        "below a minimum | --cluster-id=c --resync-seconds=1 | - | --resync-seconds: must be at least 10, was 1",
        "a switch that is neither | --cluster-id=c | MULTIPATH=yes | --multipath (env MULTIPATH): 'yes' is neither true nor false",
      })
  void aBadValueIsNamedWithWhereItCameFrom(String name, String flags, String env, String problem) {
    assertThat(TABLE.read(pairs(flags), pairs(env)).problems()).containsExactly(problem);
  }

  @Test
  void everyProblemIsReportedAtOnce() {
    assertThat(
            TABLE
                .read(pairs("--workers=0 --resync-seconds=1"), pairs("MULTIPATH=maybe"))
                .problems())
        .hasSize(4);
  }

  @Test
  void aListIsCommaSeparatedWithBlanksDropped() {
    Values v = TABLE.read(pairs("--cluster-id=c --name=a,,b"), Map.of());
    assertThat(v.get(NAMES)).containsExactly("a", "b");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a default that does not parse | --workers's default many: 'many' is not a whole number",
        "two settings with one flag | two settings are named --workers or null",
      })
  void aDefectiveTableIsRefusedWhenBuilt(String name, String message) {
    List<Setting<?>> settings =
        name.startsWith("a default")
            ? List.of(Setting.integer("--workers", 1, 2).byDefault("many").doc("x"))
            : List.of(
                Setting.text("--workers").byDefault("a").doc("x"),
                Setting.text("--workers").byDefault("b").doc("y"));
    assertThatThrownBy(() -> new SettingsTable(settings))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(message);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "with variable and default | --workers | at once (env WORKERS, default 4)",
        "required | --cluster-id | the cluster (env CLUSTER_ID, required)",
        "without variable | --resync-seconds | again (default 300)",
        "a default in words | --name | names (env NAMES, default none)",
      })
  void helpSaysTheVariableAndTheDefault(String name, String flag, String help) {
    Setting<?> s =
        TABLE.settings().stream().filter(x -> x.flag().equals(flag)).findFirst().orElseThrow();
    assertThat(SettingOptions.help(s)).isEqualTo(help);
  }
}
