package org.standalonecinder.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The figures a reliability suite reports: printed, and written to {@code
 * target/reliability/<name>}, where docs/reliability.md takes them from. Each run starts the file
 * afresh.
 */
final class ReliabilityReport {

  private final Path file;

  private ReliabilityReport(Path file) {
    this.file = file;
  }

  /** A report whose file is emptied now. */
  static ReliabilityReport fresh(String name) {
    Path file = Path.of("target", "reliability", name);
    try {
      Files.createDirectories(file.getParent());
      Files.deleteIfExists(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new ReliabilityReport(file);
  }

  /** Prints and appends one line ({@link String#format}). */
  synchronized void line(String format, Object... args) {
    String line = String.format(format, args);
    System.out.println(line);
    try {
      Files.writeString(file, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
