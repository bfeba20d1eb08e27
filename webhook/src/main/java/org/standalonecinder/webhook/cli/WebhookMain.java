package org.standalonecinder.webhook.cli;

import java.util.Map;
import org.standalonecinder.api.settings.LogSettings;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The webhook's command line: {@code serve}, {@code certs generate}, {@code cds-training} and
 * {@code exposure}.
 */
@Command(
    name = "standalone-cinder-webhook",
    mixinStandardHelpOptions = true,
    version = "standalone-cinder-webhook 0.1.0",
    description = "Admission webhook for standalone-cinder clone requests.",
    subcommands = {
      ServeCommand.class,
      CertsCommand.class,
      CdsTrainingCommand.class,
      ExposureCommand.class
    })
public final class WebhookMain {

  public static void main(String[] args) {
    System.exit(run(System.getenv(), args));
  }

  /**
   * Runs a command, unless the logging variables of {@code env} are ones logback would quietly
   * misread (exit 2, as for any bad setting).
   */
  static int run(Map<String, String> env, String... args) {
    int refused = LogSettings.refuse(env, "standalone-cinder-webhook", System.err);
    if (refused != 0) {
      return refused;
    }
    return new CommandLine(new WebhookMain()).execute(args);
  }
}
