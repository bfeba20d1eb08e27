package org.standalonecinder.provisioner.cli;

import picocli.CommandLine.Command;

/** Commands that talk to Cinder directly. */
@Command(
    name = "cinder",
    mixinStandardHelpOptions = true,
    description = "Talk to Cinder directly.",
    subcommands = {CheckCommand.class, PoolsCommand.class})
final class CinderCommand {}
