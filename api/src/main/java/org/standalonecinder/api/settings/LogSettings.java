package org.standalonecinder.api.settings;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The two logging variables both programs read ({@link LogConfigurator}): {@code LOG_FORMAT} picks
 * the appender and {@code LOG_LEVEL} the root level. Read as they are, a misspelt format or level
 * would quietly become the default, so a typo in a Deployment would give a container that logs
 * otherwise than its admin asked; the programs check both before they start and refuse with what to
 * write instead.
 */
public final class LogSettings {

  /** The appenders {@link LogConfigurator} makes. */
  public static final Set<String> FORMATS = Set.of("text", "json");

  /** The levels logback knows (it reads them in any case). */
  public static final List<String> LEVELS =
      List.of("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "OFF");

  private LogSettings() {}

  /**
   * What is wrong with the logging variables of {@code env}, one sentence each; empty when both are
   * unset, blank or valid.
   */
  public static List<String> problems(Map<String, String> env) {
    List<String> out = new ArrayList<>();
    String format = env.getOrDefault("LOG_FORMAT", "").trim();
    if (!format.isEmpty() && !FORMATS.contains(format)) {
      out.add("LOG_FORMAT must be text or json, was \"" + format + "\"");
    }
    String level = env.getOrDefault("LOG_LEVEL", "").trim();
    if (!level.isEmpty() && !LEVELS.contains(level.toUpperCase(Locale.ROOT))) {
      out.add("LOG_LEVEL must be one of " + String.join(", ", LEVELS) + ", was \"" + level + "\"");
    }
    return out;
  }

  /**
   * Says on {@code err} what is wrong with {@code env}'s logging variables, one line each after
   * {@code program}'s name, and gives the exit code for it: 2 (a bad setting), or 0 when there is
   * nothing to say.
   */
  public static int refuse(Map<String, String> env, String program, java.io.PrintStream err) {
    List<String> problems = problems(env);
    problems.forEach(p -> err.println(program + ": " + p));
    return problems.isEmpty() ? 0 : 2;
  }
}
