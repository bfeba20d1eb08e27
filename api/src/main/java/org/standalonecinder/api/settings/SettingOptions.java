package org.standalonecinder.api.settings;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Picocli's whole part in settings: one option per setting, taking text, with the help line made
 * from the table; parsing, the environment, defaults and checks are the table's. A command names
 * {@link Transformer} as its {@code modelTransformer} and implements {@link Configured}.
 */
public final class SettingOptions {

  private SettingOptions() {}

  /** A command whose options come from a settings table. */
  public interface Configured {
    SettingsTable settings();
  }

  /** Adds the options of the command's table to the command's model. */
  public static final class Transformer implements CommandLine.IModelTransformer {
    @Override
    public CommandSpec transform(CommandSpec spec) {
      if (!(spec.userObject() instanceof Configured c)) {
        throw new IllegalStateException(spec.name() + " does not implement Configured");
      }
      for (Setting<?> s : c.settings().settings()) {
        spec.addOption(option(s));
      }
      // In the table's order, which groups them as the docs do; a synopsis of 30 flags helps no
      // one.
      spec.usageMessage().sortOptions(false).abbreviateSynopsis(true);
      return spec;
    }
  }

  private static OptionSpec option(Setting<?> s) {
    OptionSpec.Builder b =
        OptionSpec.builder(s.flag()).description(help(s)).paramLabel(label(s.flag()));
    switch (s.form()) {
      case SWITCH -> b.type(String.class).arity("0..1").fallbackValue("true");
      case LIST -> b.type(List.class).auxiliaryTypes(String.class).arity("1");
      default -> b.type(String.class).arity("1");
    }
    return b.build();
  }

  private static String label(String flag) {
    return "<" + flag.substring(2) + ">";
  }

  /** The help line: what it is for, its variable and its default. */
  static String help(Setting<?> s) {
    StringBuilder h = new StringBuilder(s.doc());
    String env = s.env() == null ? null : "env " + s.env();
    String def =
        s.required()
            ? "required"
            : s.shownDefault() == null || s.shownDefault().isEmpty()
                ? null
                : "default " + s.shownDefault();
    if (env != null || def != null) {
      h.append(" (").append(env == null ? def : def == null ? env : env + ", " + def).append(")");
    }
    return h.toString();
  }

  /** The text of each setting given on the command line, by flag. */
  public static Map<String, String> given(CommandSpec spec) {
    Map<String, String> given = new HashMap<>();
    for (OptionSpec o : spec.options()) {
      Object v = o.getValue();
      if (v instanceof String text) {
        given.put(o.longestName(), text);
      } else if (v instanceof List<?> items && !items.isEmpty()) {
        given.put(o.longestName(), String.join(",", items.stream().map(String::valueOf).toList()));
      }
    }
    return given;
  }
}
