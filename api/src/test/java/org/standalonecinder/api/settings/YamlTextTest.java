package org.standalonecinder.api.settings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringReader;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class YamlTextTest {

  /** Each document stops the reader on a line that holds a secret, which must not be quoted. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "an unclosed flow | 'a:\\n  password: {s3cret, [' | line 2, column 23: expected the node content, but found '<stream end>'",
        "a key given twice | 'auth:\\n  password: s3cret\\n  password: s3cret2' | line 3, column 3: found duplicate key password",
        "a tab as indentation | 'auth:\\n\\tpassword: s3cret' | line 2, column 1: found character '\\t(TAB)' that cannot start any token",
        "a value where a key belongs | 'password: s3cret: more' | line 1, column 17: mapping values are not allowed here",
        "an unknown alias | 'password: *s3cret' | found undefined alias",
      })
  void invalidYamlIsRefusedWithWhereAndWhatButNotItsText(String name, String yaml, String said) {
    String text = yaml.replace("\\n", "\n").replace("\\t", "\t");
    for (Runnable load :
        List.<Runnable>of(() -> YamlText.load(text), () -> YamlText.load(new StringReader(text)))) {
      assertThatThrownBy(load::run)
          .isInstanceOf(YamlText.InvalidYamlException.class)
          .hasMessageContaining(said)
          .hasNoCause()
          .satisfies(
              e -> assertThat(e.getMessage()).doesNotContain("s3cret:", "s3cret\n", "{s3cret"));
    }
  }

  @Test
  void aDocumentIsMapsListsAndYaml12Scalars() {
    assertThat(YamlText.load("a: [1, true, yes, on, '01', 1.5]\nb: {c: null}"))
        .isEqualTo(
            Map.of(
                "a",
                List.of(1, true, "yes", "on", "01", 1.5),
                "b",
                java.util.Collections.singletonMap("c", null)));
  }

  @Test
  void anEmptyDocumentIsNull() {
    assertThat(YamlText.load("")).isNull();
  }

  @Test
  void aTagNamingAClassIsNotFollowed() {
    assertThatThrownBy(() -> YamlText.load("a: !!javax.script.ScriptEngineManager [x]"))
        .isInstanceOf(YamlText.InvalidYamlException.class);
  }
}
