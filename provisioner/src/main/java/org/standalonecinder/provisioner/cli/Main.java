package org.standalonecinder.provisioner.cli;

import java.util.Map;
import org.standalonecinder.api.settings.LogSettings;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The provisioner's command line: {@code run} the controller, {@code cinder check} the cloud. */
@Command(
    name = "standalone-cinder",
    mixinStandardHelpOptions = true,
    version = "standalone-cinder 0.1.0",
    description = "Cinder block storage for Kubernetes without Nova.",
    subcommands = {CinderCommand.class, RunCommand.class, ResolverCommand.class, GrowCommand.class})
public final class Main {

  public static void main(String[] args) {
    System.exit(run(System.getenv(), args));
  }

  static int run(String... args) {
    return run(System.getenv(), args);
  }

  /**
   * Runs a command, unless the logging variables of {@code env} are ones logback would quietly
   * misread (exit 2, as for any bad setting).
   */
  static int run(Map<String, String> env, String... args) {
    int refused = LogSettings.refuse(env, "standalone-cinder", System.err);
    if (refused != 0) {
      return refused;
    }
    return new CommandLine(new Main()).execute(args);
  }
}
