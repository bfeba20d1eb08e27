package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.provisioner.cli.Main;
import org.standalonecinder.webhook.cli.WebhookMain;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

/**
 * What users read says only what is true of the code: every link reaches a file (and a heading)
 * that exists, no page sends readers to an issue number, and every command the pages show names
 * subcommands and flags the programs define (read from picocli's model of each program).
 */
class DocsTest {

  private static final Path ROOT = Path.of(System.getProperty("project.root", "..")).normalize();

  /** The programs a page may show, by the names it may show them under. */
  private static final Map<String, CommandSpec> PROGRAMS =
      Map.of(
          "standalone-cinder", new CommandLine(new Main()).getCommandSpec(),
          "standalone-cinder-provisioner.jar", new CommandLine(new Main()).getCommandSpec(),
          "standalone-cinder-webhook", new CommandLine(new WebhookMain()).getCommandSpec(),
          "standalone-cinder-webhook.jar", new CommandLine(new WebhookMain()).getCommandSpec());

  static Stream<String> pages() throws IOException {
    List<String> out = new ArrayList<>(List.of("README.md"));
    try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
      docs.filter(p -> p.toString().endsWith(".md"))
          .map(p -> ROOT.relativize(p).toString())
          .sorted()
          .forEach(out::add);
    }
    out.add("charts/standalone-cinder/templates/NOTES.txt");
    out.add("charts/standalone-cinder/values.yaml");
    return out.stream();
  }

  private static String read(String page) {
    try {
      return Files.readString(ROOT.resolve(page));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
  static String anchor(String heading) {
    return heading
        .strip()
        .toLowerCase(Locale.ROOT)
        .replaceAll("[^\\p{L}\\p{N} _-]", "")
        .replace(' ', '-');
  }

  private static Set<String> anchors(Path markdown) {
    Set<String> out = new TreeSet<>();
    Map<String, Integer> seen = new HashMap<>();
    boolean code = false;
    for (String line : read(ROOT.relativize(markdown).toString()).split("\n")) {
      if (line.startsWith("```")) {
        code = !code;
      } else if (!code && line.matches("#{1,6} .*")) {
        String a = anchor(line.replaceFirst("^#+ ", ""));
        int n = seen.merge(a, 1, Integer::sum);
        out.add(n == 1 ? a : a + "-" + (n - 1));
      }
    }
    return out;
  }

  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

  /** Links of a page that reach no file, or no heading of the file they name. */
  static List<String> brokenLinks(String page, String text) {
    List<String> out = new ArrayList<>();
    Path dir = ROOT.resolve(page).getParent();
    Matcher m = LINK.matcher(text);
    while (m.find()) {
      String target = m.group(1);
      if (target.matches("[a-z]+:.*")) {
        continue; // http(s), mailto: not ours to check here
      }
      int hash = target.indexOf('#');
      String file = hash < 0 ? target : target.substring(0, hash);
      Path path = file.isEmpty() ? ROOT.resolve(page) : dir.resolve(file).normalize();
      if (!Files.exists(path)) {
        out.add(page + ": " + target + " (no such file)");
      } else if (hash >= 0 && path.toString().endsWith(".md")) {
        String a = target.substring(hash + 1);
        if (!anchors(path).contains(a)) {
          out.add(page + ": " + target + " (no such heading in " + ROOT.relativize(path) + ")");
        }
      }
    }
    return out;
  }

  private static final Pattern ISSUE =
      Pattern.compile("(?i)\\bissues?\\s+#?\\d+\\b|(?<![\\w(/&#])#\\d{1,5}\\b");

  /** The code of a page: its fenced blocks (continued lines joined) and its inline code. */
  static List<String> code(String text) {
    List<String> out = new ArrayList<>();
    boolean fenced = false;
    StringBuilder line = new StringBuilder();
    for (String l : text.split("\n")) {
      if (l.startsWith("```")) {
        fenced = !fenced;
        continue;
      }
      if (fenced) {
        if (l.endsWith("\\")) {
          line.append(l, 0, l.length() - 1).append(' ');
        } else {
          out.add(line.append(l).toString());
          line.setLength(0);
        }
      } else {
        Matcher m = Pattern.compile("`([^`]+)`").matcher(l);
        while (m.find()) {
          out.add(m.group(1));
        }
      }
    }
    return out;
  }

  /**
   * A program where a shell runs one: at the start of a line (after a prompt or variables), in
   * {@code $(...)}, after a pipe, {@code ;}, {@code &&} or kubectl exec's {@code --}; then a word
   * that is a command or a flag (not output such as "standalone-cinder demo: ...").
   */
  private static final Pattern INVOCATION =
      Pattern.compile(
          "(?:^\\s*(?:\\$\\s+)?(?:[A-Z_]+=\\S*\\s+)*|\\$\\(|[|;&]\\s*|\\s--\\s+)"
              + "(?:java -jar \\S*?(standalone-cinder-(?:provisioner|webhook)\\.jar)"
              + "|(standalone-cinder(?:-[a-z]+)?))\\s+((?:--?[a-z]|[a-z][a-z0-9-]*(?:\\s|$)).*)");

  /**
   * What is wrong with the commands in {@code code}: a program that does not exist, a subcommand
   * its parent lacks, a flag the command does not define.
   */
  static List<String> badCommands(List<String> code) {
    List<String> out = new ArrayList<>();
    for (String line : code) {
      Matcher m = INVOCATION.matcher(line);
      if (!m.find()) {
        continue;
      }
      String program = m.group(1) != null ? m.group(1) : m.group(2);
      CommandSpec spec = PROGRAMS.get(program);
      String rest = m.group(3).split("\\s*(\\||;|&&|\\)|2>|>|<|#)", 2)[0];
      if (spec == null) {
        if (!rest.startsWith("-") && rest.matches("[a-z]+\\b.*")) {
          out.add("`" + line.strip() + "`: no program " + program);
        }
        continue;
      }
      boolean positional = false;
      for (String word : rest.trim().split("\\s+")) {
        String w = word.replaceAll("^\\[|\\]$", "");
        if (w.startsWith("--")) {
          String flag = w.split("=", 2)[0];
          if (spec.findOption(flag) == null) {
            out.add("`" + line.strip() + "`: " + spec.qualifiedName() + " has no " + flag);
          }
        } else if (!positional && !w.startsWith("-")) {
          CommandLine sub = spec.subcommands().get(w);
          if (sub != null) {
            spec = sub.getCommandSpec();
          } else if (!spec.subcommands().isEmpty()) {
            out.add("`" + line.strip() + "`: " + spec.qualifiedName() + " has no command " + w);
            break;
          } else {
            positional = true;
          }
        }
      }
    }
    return out;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pages")
  void everyLinkReachesAFileAndHeadingThatExist(String page) {
    assertThat(brokenLinks(page, read(page))).isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pages")
  void noPageSendsReadersToAnIssueNumber(String page) {
    assertThat(ISSUE.matcher(read(page)).results().map(r -> r.group()).toList()).isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pages")
  void everyCommandShownIsOneTheProgramsDefine(String page) {
    assertThat(badCommands(code(read(page)))).isEmpty();
  }

  /** The checks catch what they are for. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a flag no command has | standalone-cinder cinder check --cloud-conf x | cinder check has no --cloud-conf",
        "a subcommand that is not there | standalone-cinder cinder mount ID | cinder has no command mount",
        "a program that is not there | standalone-cinder-provisioner cinder pools | no program standalone-cinder-provisioner",
        "the jar with a wrong flag | java -jar provisioner/target/standalone-cinder-provisioner.jar run --wokers 4 | run has no --wokers",
        "the webhook's jar | java -jar webhook/target/standalone-cinder-webhook.jar serve --tls-dri /x | serve has no --tls-dri",
        "a flag inside brackets | standalone-cinder-webhook certs generate [--sann a] | generate has no --sann",
        "after kubectl exec | kubectl exec deploy/x -- java -jar /app/standalone-cinder-provisioner.jar cinder chek | cinder has no command chek",
        "in a command substitution | DEV=$(standalone-cinder cinder attach ID --mod ro) | attach has no --mod"
      })
  void aBadCommandIsReported(String name, String line, String expected) {
    assertThat(badCommands(List.of(line))).singleElement().asString().contains(expected);
  }

  @Test
  void theRightOnesAreNot() {
    assertThat(
            badCommands(
                List.of(
                    "standalone-cinder cinder check --cloud-config cloud.conf",
                    "java -jar /app/standalone-cinder-provisioner.jar cinder check",
                    "standalone-cinder-webhook certs generate --out DIR [--san localhost --ip"
                        + " 127.0.0.1]",
                    "DEV=$(standalone-cinder cinder attach ID --mode ro) || exit 1",
                    "kubectl -n standalone-cinder exec deployment/standalone-cinder --"
                        + " java -jar /app/standalone-cinder-provisioner.jar cinder check",
                    "helm uninstall standalone-cinder --namespace standalone-cinder",
                    "standalone-cinder demo: a real control plane")))
        .isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a missing file | see [x](nowhere.md) | nowhere.md (no such file)",
        "a missing heading | see [x](install.md#no-such-step) | no such heading in docs/install.md",
      })
  void aBrokenLinkIsReported(String name, String text, String expected) {
    assertThat(brokenLinks("docs/operations.md", text))
        .singleElement()
        .asString()
        .contains(expected);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "Uninstall (kustomize) *(tested)* | uninstall-kustomize-tested",
        "`cinder check` | cinder-check",
        "Who may clone what, and whom the webhook trusts | who-may-clone-what-and-whom-the-webhook-trusts"
      })
  void anchorsAreGitHubs(String heading, String anchor) {
    assertThat(anchor(heading)).isEqualTo(anchor);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "no node-aware topology (issue 15) | issue 15",
        "fixed in #42. | #42",
      })
  void anIssueNumberIsFound(String text, String found) {
    assertThat(ISSUE.matcher(text).results().map(r -> r.group()).toList()).containsExactly(found);
  }
}
