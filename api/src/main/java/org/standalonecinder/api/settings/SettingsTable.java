package org.standalonecinder.api.settings;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A command's settings, in the order help and the docs list them. Reading them reports every
 * problem at once: a Deployment should not need one restart per typo.
 */
public final class SettingsTable {

  private final List<Setting<?>> settings;

  /**
   * @throws IllegalStateException when two settings share a flag or a variable, or a default does
   *     not parse: a defect of the table, found by any test that builds it
   */
  public SettingsTable(List<Setting<?>> settings) {
    Set<String> names = new HashSet<>();
    for (Setting<?> s : settings) {
      if (!names.add(s.flag()) || (s.env() != null && !names.add(s.env()))) {
        throw new IllegalStateException("two settings are named " + s.flag() + " or " + s.env());
      }
      if (s.byDefault() != null) {
        try {
          s.parse(s.byDefault());
        } catch (IllegalArgumentException e) {
          throw new IllegalStateException(
              s.flag() + "'s default " + s.byDefault() + ": " + e.getMessage(), e);
        }
      }
    }
    this.settings = List.copyOf(settings);
  }

  /** This table with more settings after its own. */
  public SettingsTable and(List<Setting<?>> more) {
    List<Setting<?>> all = new ArrayList<>(settings);
    all.addAll(more);
    return new SettingsTable(all);
  }

  public List<Setting<?>> settings() {
    return settings;
  }

  /**
   * The table as Markdown rows (flag, variable, default, what it is for), as the docs show it; a
   * test in each module holds the docs to these rows.
   */
  public List<String> markdown() {
    List<String> rows = new ArrayList<>();
    for (Setting<?> s : settings) {
      String def =
          s.required()
              ? "required"
              : s.byDefault() != null && !s.byDefault().isEmpty()
                  ? "`" + s.byDefault() + "`"
                  : s.shownDefault() == null ? "" : s.shownDefault();
      rows.add(
          "| `"
              + s.flag()
              + "` | "
              + (s.env() == null ? "" : "`" + s.env() + "`")
              + " | "
              + def
              + " | "
              + s.doc().replace("|", "\\|")
              + " |");
    }
    return rows;
  }

  /**
   * The values of every setting.
   *
   * @param given the text of each flag given on the command line, by flag
   * @param env the environment
   */
  public Values read(Map<String, String> given, Map<String, String> env) {
    Values values = new Values();
    for (Setting<?> s : settings) {
      read(s, given, env, values);
    }
    return values;
  }

  private static <T> void read(
      Setting<T> s, Map<String, String> given, Map<String, String> env, Values values) {
    String text = given.get(s.flag());
    String from = s.flag();
    if (blank(text) && s.env() != null) {
      text = env.get(s.env());
      from = s.flag() + " (env " + s.env() + ")";
    }
    boolean set = !blank(text);
    if (!set) {
      if (s.required()) {
        values.problem(
            s.flag() + (s.env() == null ? "" : " (or env " + s.env() + ")") + " is required");
        return;
      }
      text = s.byDefault();
    }
    if (text == null) {
      return;
    }
    try {
      values.put(s, s.parse(text), set);
    } catch (IllegalArgumentException e) {
      values.problem(from + ": " + e.getMessage());
    }
  }

  private static boolean blank(String text) {
    return text == null || text.isBlank();
  }
}
