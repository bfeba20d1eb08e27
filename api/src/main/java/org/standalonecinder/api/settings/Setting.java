package org.standalonecinder.api.settings;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * One setting of a command: its flag, the environment variable a Deployment sets instead, its
 * default, the parser that turns its text into a value (or says what is wrong with it), and the
 * line of documentation that {@code --help} and the docs show. A flag beats the environment, the
 * environment beats the default; blank text counts as not set, as a Deployment's empty {@code
 * value: ""} means.
 *
 * @param <T> the value's type
 */
public final class Setting<T> {

  /**
   * Turns a setting's text into its value; throws {@link IllegalArgumentException} saying why not.
   */
  @FunctionalInterface
  public interface Parser<T> {
    T parse(String text);
  }

  /** How the setting is written on the command line. */
  public enum Form {
    /** {@code --name VALUE} or {@code --name=VALUE}. */
    VALUE,
    /** {@code --name} alone for true, or {@code --name=false}. */
    SWITCH,
    /** Comma-separated, and the flag may be repeated. */
    LIST
  }

  private final String flag;
  private final String env;
  private final String byDefault;
  private final String shownDefault;
  private final boolean required;
  private final Form form;
  private final Parser<T> parser;
  private final String doc;

  private Setting(Builder<T> b) {
    if (!b.flag.matches("--[a-z][a-z0-9-]*")) {
      throw new IllegalArgumentException("a flag is --lower-case-words, not " + b.flag);
    }
    if (b.doc == null || b.doc.isBlank()) {
      throw new IllegalArgumentException(b.flag + " has no documentation");
    }
    if (!b.required && b.byDefault == null && b.shownDefault == null) {
      throw new IllegalArgumentException(
          b.flag + " has no default: say what happens without it (shownDefault)");
    }
    if (b.required && b.byDefault != null) {
      throw new IllegalArgumentException(b.flag + " is required and has a default");
    }
    this.flag = b.flag;
    this.env = b.env;
    this.byDefault = b.byDefault;
    this.shownDefault = b.shownDefault;
    this.required = b.required;
    this.form = b.form;
    this.parser = b.parser;
    this.doc = b.doc;
  }

  /** Text, trimmed. */
  public static Builder<String> text(String flag) {
    return new Builder<>(flag, Form.VALUE, String::trim);
  }

  /** A file or folder. */
  public static Builder<Path> path(String flag) {
    return new Builder<>(flag, Form.VALUE, t -> Path.of(t.trim()));
  }

  /** A whole number from {@code min} to {@code max}. */
  public static Builder<Integer> integer(String flag, int min, int max) {
    return new Builder<>(
        flag,
        Form.VALUE,
        t -> {
          int n;
          try {
            n = Integer.parseInt(t.trim());
          } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + t + "' is not a whole number");
          }
          if (n < min || n > max) {
            throw new IllegalArgumentException(
                (max == Integer.MAX_VALUE
                        ? "must be at least " + min
                        : "must be between " + min + " and " + max)
                    + ", was "
                    + n);
          }
          return n;
        });
  }

  /** A TCP port; 0 lets the system choose. */
  public static Builder<Integer> port(String flag) {
    return integer(flag, 0, 65535);
  }

  /** True or false; the flag alone means true. */
  public static Builder<Boolean> onOff(String flag) {
    return new Builder<>(
        flag,
        Form.SWITCH,
        t ->
            switch (t.trim().toLowerCase(Locale.ROOT)) {
              case "true" -> true;
              case "false" -> false;
              default ->
                  throw new IllegalArgumentException("'" + t + "' is neither true nor false");
            });
  }

  /** Comma-separated text, repeatable; blank items dropped. */
  public static Builder<List<String>> list(String flag) {
    return new Builder<>(
        flag,
        Form.LIST,
        t -> Arrays.stream(t.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList());
  }

  /** One of the constants, written in any case. */
  public static <E extends Enum<E>> Builder<E> oneOf(String flag, Class<E> type) {
    return new Builder<>(
        flag,
        Form.VALUE,
        t -> {
          for (E e : type.getEnumConstants()) {
            if (e.name().equalsIgnoreCase(t.trim())) {
              return e;
            }
          }
          throw new IllegalArgumentException(
              "'"
                  + t
                  + "' is not one of "
                  + String.join(
                      ", ",
                      Arrays.stream(type.getEnumConstants())
                          .map(e -> e.name().toLowerCase(Locale.ROOT))
                          .toList()));
        });
  }

  /** Parsed by the given parser, which checks what the value means. */
  public static <T> Builder<T> of(String flag, Parser<T> parser) {
    return new Builder<>(flag, Form.VALUE, parser);
  }

  public String flag() {
    return flag;
  }

  /** The environment variable, or null when the setting has none. */
  public String env() {
    return env;
  }

  /** The default's text, or null when there is none. */
  public String byDefault() {
    return byDefault;
  }

  /** The default as the docs show it: the text, or what happens without one. */
  public String shownDefault() {
    return shownDefault != null ? shownDefault : byDefault;
  }

  public boolean required() {
    return required;
  }

  public Form form() {
    return form;
  }

  public String doc() {
    return doc;
  }

  /** The value of this text. */
  public T parse(String text) {
    return parser.parse(text);
  }

  @Override
  public String toString() {
    return flag;
  }

  /**
   * Builds a setting.
   *
   * @param <T> the value's type
   */
  public static final class Builder<T> {
    private final String flag;
    private final Form form;
    private final Parser<T> parser;
    private String env;
    private String byDefault;
    private String shownDefault;
    private boolean required;
    private String doc;

    private Builder(String flag, Form form, Parser<T> parser) {
      this.flag = Objects.requireNonNull(flag);
      this.form = form;
      this.parser = parser;
    }

    /** Also read from this environment variable. */
    public Builder<T> env(String name) {
      this.env = name;
      return this;
    }

    /** The text used when neither flag nor environment gives one. */
    public Builder<T> byDefault(String text) {
      this.byDefault = text;
      return this;
    }

    /** What happens without a value, as the docs say it, when no fixed text says it. */
    public Builder<T> shownDefault(String words) {
      this.shownDefault = words;
      return this;
    }

    /** Must be given. */
    public Builder<T> required() {
      this.required = true;
      return this;
    }

    /** Further checks or a conversion of the parsed value. */
    public <R> Builder<R> then(java.util.function.Function<T, R> f) {
      Builder<R> b = new Builder<>(flag, form, t -> f.apply(parser.parse(t)));
      b.env = env;
      b.byDefault = byDefault;
      b.shownDefault = shownDefault;
      b.required = required;
      b.doc = doc;
      return b;
    }

    /** What it is for, one sentence; help and the docs show it. */
    public Setting<T> doc(String words) {
      this.doc = words;
      return new Setting<>(this);
    }
  }
}
