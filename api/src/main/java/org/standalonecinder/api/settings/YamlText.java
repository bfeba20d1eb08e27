package org.standalonecinder.api.settings;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;

/**
 * Reads YAML that an admin wrote (the webhook's policy, a clouds.yaml) into maps, lists and
 * scalars, with YAML 1.2's plain types and without classes named in the text. A key given twice is
 * an error, not a silent choice of the last.
 *
 * <p>Errors say where (line and column) and what, but never quote the text: a YAML library's own
 * message shows the line it stopped at, and in a clouds.yaml that line may hold a password. The
 * library's exception is not kept as the cause for the same reason.
 */
public final class YamlText {

  private YamlText() {}

  /**
   * The document in {@code text}: a {@code Map}, {@code List} or scalar; null for an empty one.
   *
   * @throws InvalidYamlException when it is no YAML
   */
  public static Object load(String text) {
    try {
      return loader().loadFromString(text);
    } catch (YamlEngineException e) {
      throw InvalidYamlException.of(e);
    }
  }

  /**
   * As {@link #load(String)}, from a reader.
   *
   * @throws UncheckedIOException when the reader fails
   */
  public static Object load(Reader reader) {
    try {
      return loader().loadFromReader(reader);
    } catch (YamlEngineException e) {
      if (e.getCause() instanceof IOException io) {
        throw new UncheckedIOException(io);
      }
      throw InvalidYamlException.of(e);
    }
  }

  private static Load loader() {
    return new Load(LoadSettings.builder().setAllowDuplicateKeys(false).build());
  }

  /** YAML that cannot be read, described without its text. */
  public static final class InvalidYamlException extends IllegalArgumentException {

    private InvalidYamlException(String message) {
      super(message);
    }

    static InvalidYamlException of(YamlEngineException e) {
      if (e instanceof MarkedYamlEngineException m) {
        StringBuilder b = new StringBuilder();
        m.getProblemMark().or(m::getContextMark).ifPresent(mark -> b.append(at(mark)).append(": "));
        b.append(m.getProblem() == null ? "not YAML" : m.getProblem());
        if (m.getContext() != null) {
          b.append(" (").append(m.getContext()).append(")");
        }
        return new InvalidYamlException(b.toString());
      }
      // Unmarked errors (the size limit, a bad encoding) name no text of the document.
      return new InvalidYamlException(e.getMessage());
    }

    private static String at(Mark mark) {
      return "line " + (mark.getLine() + 1) + ", column " + (mark.getColumn() + 1);
    }
  }
}
