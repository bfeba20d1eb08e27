package org.standalonecinder.webhook.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The webhook's command line; {@code certs generate} today, the server with the webhook issue. */
@Command(
    name = "standalone-cinder-webhook",
    mixinStandardHelpOptions = true,
    version = "standalone-cinder-webhook 0.1.0",
    description = "Admission webhook for standalone-cinder clone requests.",
    subcommands = {CertsCommand.class})
public final class WebhookMain {

  public static void main(String[] args) {
    System.exit(new CommandLine(new WebhookMain()).execute(args));
  }
}
