package org.standalonecinder.api.settings;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/** The settings as read: each one's value, and every problem found on the way. */
public final class Values {

  private final Map<Setting<?>, Object> values = new HashMap<>();
  private final Set<Setting<?>> set = new HashSet<>();
  private final List<String> problems = new ArrayList<>();

  Values() {}

  <T> void put(Setting<T> s, T value, boolean given) {
    values.put(s, value);
    if (given) {
      set.add(s);
    }
  }

  /** The value, its default, or null when it has neither or its text did not parse. */
  @SuppressWarnings("unchecked")
  public <T> T get(Setting<T> s) {
    return (T) values.get(s);
  }

  /** Whether the flag or the environment gave it. */
  public boolean given(Setting<?> s) {
    return set.contains(s);
  }

  /** A problem that involves more than one setting. */
  public void problem(String message) {
    problems.add(message);
  }

  /**
   * What {@code make} returns, or null with its {@link IllegalArgumentException}'s message as a
   * problem: for values built from several settings whose constructors check them.
   */
  public <T> T attempt(String what, Supplier<T> make) {
    try {
      return make.get();
    } catch (IllegalArgumentException e) {
      problem(what == null ? e.getMessage() : what + ": " + e.getMessage());
      return null;
    }
  }

  /** Every problem, in the order of the table; empty when the command can run. */
  public List<String> problems() {
    return List.copyOf(problems);
  }
}
