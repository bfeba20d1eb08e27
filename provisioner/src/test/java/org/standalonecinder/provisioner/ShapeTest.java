package org.standalonecinder.provisioner;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The size the provisioner's sources keep to: a file past 400 lines or a method past 60 is asking
 * to be split, and this says so when one grows past them. Methods are found as google-java-format
 * lays them out (a declaration at two or four spaces, its body closed at the same depth), which is
 * what Spotless keeps every source in.
 */
class ShapeTest {

  private static final Path MAIN = Path.of("src/main/java");

  static final int MOST_LINES = 400;
  static final int LONGEST_METHOD = 60;

  /** A method or constructor declaration opening a body, at class or nested-class depth. */
  private static final Pattern DECLARATION =
      Pattern.compile(
          "^ {2}(?: {2})?(?:@\\w+ )?(?:(?:public|private|protected|static|final|synchronized"
              + "|default|abstract) )*[\\w<>\\[\\], .?]+ (\\w+)\\([^;]*$");

  @Test
  void noFileIsPastFourHundredLines() throws IOException {
    List<String> long_ = new ArrayList<>();
    for (Path f : sources()) {
      int n = Files.readAllLines(f).size();
      if (n > MOST_LINES) {
        long_.add(MAIN.relativize(f) + ": " + n + " lines");
      }
    }
    assertThat(long_).as("files past " + MOST_LINES + " lines").isEmpty();
  }

  @Test
  void noMethodIsPastSixtyLines() throws IOException {
    List<String> long_ = new ArrayList<>();
    for (Path f : sources()) {
      for (String m : longMethods(Files.readAllLines(f), LONGEST_METHOD)) {
        long_.add(MAIN.relativize(f) + ": " + m);
      }
    }
    assertThat(long_).as("methods past " + LONGEST_METHOD + " lines").isEmpty();
  }

  /** The finder itself, on the shapes it meets: a test that cannot fail would be no guard. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a method of 3 lines past a limit of 2 | 2 | 1 | f",
        "the same within a limit of 3         | 3 | 0 | -",
      })
  void theFinderCountsFromTheDeclarationToItsClosingBrace(
      String name, int limit, int found, String which) {
    List<String> src =
        List.of(
            "class A {",
            "  private int f(int x) {",
            "    return x;",
            "  }",
            "  private static final int K = 1;",
            "}");
    List<String> hits = longMethods(src, limit);
    assertThat(hits).hasSize(found);
    if (found > 0) {
      assertThat(hits.get(0)).startsWith(which + " ");
    }
  }

  /** Each method past {@code limit} lines, as {@code name (n lines, from line k)}. */
  static List<String> longMethods(List<String> lines, int limit) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      String l = lines.get(i);
      Matcher m = DECLARATION.matcher(l);
      String head = l.strip();
      if (!m.matches()
          || head.startsWith("return ")
          || head.startsWith("new ")
          || head.startsWith("throw ")
          || l.substring(0, l.indexOf('(')).contains("=")
          || l.contains(" record ")
          || l.contains(" class ")) {
        continue;
      }
      int depth = 0;
      boolean opened = false;
      int j = i;
      for (; j < lines.size(); j++) {
        String s = lines.get(j);
        depth += count(s, '{') - count(s, '}');
        opened |= s.indexOf('{') >= 0;
        if ((opened && depth <= 0) || (!opened && s.stripTrailing().endsWith(";"))) {
          break;
        }
      }
      if (opened) {
        int n = j - i + 1;
        if (n > limit) {
          out.add(m.group(1) + " (" + n + " lines, from line " + (i + 1) + ")");
        }
        i = j;
      }
    }
    return out;
  }

  private static int count(String s, char c) {
    int n = 0;
    for (int i = 0; i < s.length(); i++) {
      if (s.charAt(i) == c) {
        n++;
      }
    }
    return n;
  }

  private static List<Path> sources() {
    try (Stream<Path> files = Files.walk(MAIN)) {
      return files.filter(f -> f.toString().endsWith(".java")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
