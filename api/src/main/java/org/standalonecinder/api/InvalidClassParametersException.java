package org.standalonecinder.api;

import java.util.List;

/** A StorageClass's parameters are wrong; {@link #problems()} lists every one. */
public class InvalidClassParametersException extends IllegalArgumentException {

  private final List<String> problems;

  public InvalidClassParametersException(List<String> problems) {
    super(
        "StorageClass parameters: "
            + String.join("; ", problems)
            + " (known: "
            + ClassParameters.KEYS
            + ")");
    this.problems = List.copyOf(problems);
  }

  /** Each problem, saying what to change. */
  public List<String> problems() {
    return problems;
  }
}
