package org.standalonecinder.webhook.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The webhook's command line: {@code serve} and {@code certs generate}. */
@Command(
    name = "standalone-cinder-webhook",
    mixinStandardHelpOptions = true,
    version = "standalone-cinder-webhook 0.1.0",
    description = "Admission webhook for standalone-cinder clone requests.",
    subcommands = {ServeCommand.class, CertsCommand.class})
public final class WebhookMain {

  public static void main(String[] args) {
    System.exit(new CommandLine(new WebhookMain()).execute(args));
  }
}
