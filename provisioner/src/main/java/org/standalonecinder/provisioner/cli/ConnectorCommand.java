package org.standalonecinder.provisioner.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.concurrent.Callable;
import org.standalonecinder.provisioner.host.HostException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** This host's connector, exactly as {@code attach} sends it to Cinder. */
@Command(
    name = "connector",
    mixinStandardHelpOptions = true,
    description =
        "Print this host's connector (what Cinder is told when a volume is attached here).",
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:printed", "6:this host has no iSCSI initiator name (install open-iscsi)"})
final class ConnectorCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin HostOptions hostOptions = new HostOptions();

  @Override
  public Integer call() throws JsonProcessingException {
    try {
      spec.commandLine()
          .getOut()
          .println(
              new ObjectMapper()
                  .writerWithDefaultPrettyPrinter()
                  .writeValueAsString(hostOptions.connector().toApi()));
      return CheckCommand.OK;
    } catch (HostException e) {
      spec.commandLine().getErr().println("connector: " + e.getMessage());
      return AttachCommand.HOST;
    }
  }
}
