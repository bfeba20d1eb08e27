package org.standalonecinder.provisioner.cli;

import picocli.CommandLine.Command;

/** Commands that talk to Cinder directly. */
@Command(
    name = "cinder",
    mixinStandardHelpOptions = true,
    description = "Talk to Cinder directly; attach its volumes to this host without Nova.",
    subcommands = {
      CheckCommand.class,
      PoolsCommand.class,
      ConnectorCommand.class,
      AttachCommand.class,
      DetachCommand.class
    })
final class CinderCommand {}
