package org.standalonecinder.provisioner.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The provisioner's command line: {@code run} the controller, {@code cinder check} the cloud. */
@Command(
    name = "standalone-cinder",
    mixinStandardHelpOptions = true,
    version = "standalone-cinder 0.1.0",
    description = "Cinder block storage for Kubernetes without Nova.",
    subcommands = {CinderCommand.class, RunCommand.class, ResolverCommand.class})
public final class Main {

  public static void main(String[] args) {
    System.exit(run(args));
  }

  static int run(String... args) {
    return new CommandLine(new Main()).execute(args);
  }
}
