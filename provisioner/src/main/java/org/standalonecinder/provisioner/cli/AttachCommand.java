package org.standalonecinder.provisioner.cli;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig;
import org.standalonecinder.provisioner.cinder.openstack.config.ConfigException;
import org.standalonecinder.provisioner.host.AttachException;
import org.standalonecinder.provisioner.host.Attacher;
import org.standalonecinder.provisioner.host.HostException;
import org.standalonecinder.provisioner.host.LocalHost;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * Attaches a Cinder volume to this host without Nova and prints the device. The steps go to
 * standard error, the device alone to standard output, so {@code dev=$(… attach ID)} works.
 */
@Command(
    name = "attach",
    mixinStandardHelpOptions = true,
    description = {
      "Attach a Cinder volume to this host (no Nova) and print its device.",
      "Needs root. Any failure, Ctrl-C included, undoes what was done: Cinder is left as it was."
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:attached; the device is on standard output",
      "2:the configuration is invalid",
      "3:the credentials were refused (401)",
      "4:Cinder refused a step",
      "5:Cinder or Keystone did not answer",
      "6:this host could not do its part (not root, a tool missing, the login failed, no device)",
      "7:the volume cannot be attached (unknown, or in a status that forbids it)"
    })
final class AttachCommand implements Callable<Integer> {

  static final int HOST = 6;
  static final int VOLUME = 7;

  /** Read-write or read-only. */
  enum Mode {
    rw,
    ro
  }

  @Spec CommandSpec spec;

  @Mixin CloudConfigOption cloud = new CloudConfigOption();

  @Mixin HostOptions hostOptions = new HostOptions();

  @Parameters(index = "0", paramLabel = "VOLUME", description = "the Cinder volume's id")
  String volumeId;

  @Option(
      names = {"--mode"},
      defaultValue = "rw",
      description =
          "rw or ro (ro: recorded in Cinder, needs 3.54 or os-attach; device set read-only)")
  Mode mode;

  @Option(
      names = {"--device-timeout"},
      defaultValue = "PT30S",
      description =
          "how long the device may take to appear after the login (ISO-8601, default PT30S)")
  Duration deviceTimeout;

  @Override
  public Integer call() {
    PrintWriter err = spec.commandLine().getErr();
    return withCinder(
        spec,
        cloud,
        cinder -> {
          Attacher attacher =
              new Attacher(
                  cinder,
                  LocalHost.machine(),
                  hostOptions.connector(),
                  deviceTimeout,
                  err::println);
          Attacher.Attached a = attacher.attach(volumeId, mode == Mode.ro);
          err.println(
              "attached: volume "
                  + a.volumeId()
                  + " as attachment "
                  + a.attachmentId()
                  + (a.legacy() ? " (os-attach)" : ""));
          spec.commandLine().getOut().println(a.device());
          return CheckCommand.OK;
        });
  }

  /** What runs with a Cinder client. */
  interface Work {
    int run(CinderClient cinder);
  }

  /**
   * Loads the configuration, runs {@code work} with a Cinder client, and maps its failures to exit
   * codes. On Ctrl-C the work is interrupted and given a minute to undo its steps before the JVM
   * ends.
   */
  static int withCinder(CommandSpec spec, CloudConfigOption cloud, Work work) {
    PrintWriter err = spec.commandLine().getErr();
    String name = spec.name();
    CloudConfig cfg;
    try {
      cfg = cloud.load();
    } catch (ConfigException e) {
      err.println("configuration: " + e.getMessage());
      return CheckCommand.BAD_CONFIG;
    }
    Thread worker = Thread.currentThread();
    CountDownLatch finished = new CountDownLatch(1);
    Thread hook =
        new Thread(
            () -> {
              if (finished.getCount() > 0) {
                worker.interrupt();
                try {
                  finished.await(1, TimeUnit.MINUTES);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              }
            },
            name + "-undo-on-exit");
    Runtime.getRuntime().addShutdownHook(hook);
    try (OpenStackCinderClient cinder = OpenStackCinderClient.create(cfg)) {
      return work.run(cinder);
    } catch (AttachException e) {
      err.println(name + ": " + e.getMessage());
      return VOLUME;
    } catch (HostException e) {
      err.println(name + ": " + e.getMessage());
      return HOST;
    } catch (CinderException e) {
      err.println(name + ": Cinder: " + e.getMessage());
      return CheckCommand.exitCode(e);
    } finally {
      finished.countDown();
      try {
        Runtime.getRuntime().removeShutdownHook(hook);
      } catch (IllegalStateException e) {
        // the JVM is ending (Ctrl-C): the hook is running and now lets it end
      }
    }
  }
}
