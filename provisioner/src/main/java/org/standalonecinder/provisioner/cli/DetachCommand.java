package org.standalonecinder.provisioner.cli;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.standalonecinder.provisioner.host.Attacher;
import org.standalonecinder.provisioner.host.LocalHost;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** Detaches a Cinder volume from this host: log out, then end Cinder's attachment. */
@Command(
    name = "detach",
    mixinStandardHelpOptions = true,
    description = {
      "Detach a Cinder volume from this host: log out, then end Cinder's attachment.",
      "Needs root. A volume not attached here is no error. A device still in use is refused"
          + " unless --force."
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:detached, or there was nothing to detach",
      "2:the configuration is invalid",
      "3:the credentials were refused (401)",
      "4:Cinder refused a step",
      "5:Cinder or Keystone did not answer",
      "6:this host could not do its part (not root, a tool missing, the logout failed)",
      "7:the volume or attachment is unknown, not clear, or its device is in use"
    })
final class DetachCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin CloudConfigOption cloud = new CloudConfigOption();

  @Mixin HostOptions hostOptions = new HostOptions();

  @Parameters(index = "0", paramLabel = "VOLUME", description = "the Cinder volume's id")
  String volumeId;

  @Option(
      names = {"--attachment-id"},
      description = "the attachment to end (default: this host's only attachment of the volume)")
  String attachmentId;

  @Option(
      names = {"--force"},
      description =
          "end Cinder's attachment even if the device is in use or the logout fails (data in"
              + " flight may be lost)")
  boolean force;

  @Override
  public Integer call() {
    PrintWriter err = spec.commandLine().getErr();
    return AttachCommand.withCinder(
        spec,
        cloud,
        cinder -> {
          Attacher attacher =
              new Attacher(
                  cinder,
                  LocalHost.machine(),
                  hostOptions.connector(),
                  Duration.ZERO,
                  err::println);
          Attacher.Detached d = attacher.detach(volumeId, attachmentId, force);
          if (d.attachmentId() != null) {
            err.println("detached: volume " + d.volumeId() + ", attachment " + d.attachmentId());
          }
          d.skipped().forEach(s -> err.println("forced past: " + s));
          return CheckCommand.OK;
        });
  }
}
