package org.standalonecinder.api.settings;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class LogSettingsTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      nullValues = "-",
      value = {
        "neither set                 | -     | -       | ",
        "blank, as value: \"\" gives | ' '   | ' '     | ",
        "json, debug                 | json  | debug   | ",
        "text, WARN                  | text  | WARN    | ",
        "OFF                         | -     | OFF     | ",
        "a format in capitals        | JSON  | -       | LOG_FORMAT must be text or json, was \"JSON\"",
        "a misspelt format           | jsn   | -       | LOG_FORMAT must be text or json, was \"jsn\"",
        "logfmt (another tool's)     | logfmt| -       | LOG_FORMAT must be text or json, was \"logfmt\"",
        "a misspelt level            | -     | INOF    | LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR, OFF, was \"INOF\"",
        "a level by number           | -     | 3       | LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR, OFF, was \"3\"",
        "both wrong: both told       | yaml  | verbose | LOG_FORMAT must be text or json, was \"yaml\"; LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR, OFF, was \"verbose\""
      })
  void onlyWhatLogbackWouldHonourIsAccepted(
      String name, String format, String level, String expected) {
    Map<String, String> env = new HashMap<>();
    if (format != null) {
      env.put("LOG_FORMAT", format);
    }
    if (level != null) {
      env.put("LOG_LEVEL", level);
    }
    assertThat(String.join("; ", LogSettings.problems(env)))
        .isEqualTo(expected == null ? "" : expected);
  }
}
