package org.standalonecinder.provisioner.cli;

import io.fabric8.kubernetes.client.Config;
import java.nio.file.Files;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.api.settings.SettingOptions;
import org.standalonecinder.api.settings.SettingsTable;
import org.standalonecinder.api.settings.Values;
import org.standalonecinder.provisioner.app.ProvisionerApp;
import org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient;
import org.standalonecinder.provisioner.controller.RetryPolicy;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * Runs the provisioner. Its settings are {@link RunSettings}: every one has an environment
 * variable, as a Deployment sets them. The resolved configuration is logged at start with secrets
 * masked; a bad value stops the start, every one reported at once.
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    modelTransformer = SettingOptions.Transformer.class,
    description = "Run the provisioner controller against the cluster and the cloud.")
final class RunCommand implements Callable<Integer>, SettingOptions.Configured {

  private static final Logger LOG = LoggerFactory.getLogger(RunCommand.class);

  @Spec CommandSpec spec;

  /** The environment the settings are read from; tests give their own. */
  Map<String, String> env = System.getenv();

  @Override
  public SettingsTable settings() {
    return RunSettings.TABLE;
  }

  @Override
  public Integer call() throws Exception {
    Values values = RunSettings.TABLE.read(SettingOptions.given(spec), env);
    RunSettings.Run run = RunSettings.run(values, env);
    if (run == null) {
      values
          .problems()
          .forEach(p -> spec.commandLine().getErr().println("standalone-cinder run: " + p));
      return CheckCommand.BAD_CONFIG;
    }
    LOG.info("cloud: {}", run.cloud().auth());
    run.cloud().describe().forEach(l -> LOG.info("  {}", l));
    LOG.info("provisioner: {}", run.settings());

    Config kc =
        run.kubeconfig() != null
            ? Config.fromKubeconfig(Files.readString(run.kubeconfig()))
            : Config.autoConfigure(null);
    String replica =
        run.instance() != null
            ? run.instance()
            : java.net.InetAddress.getLocalHost().getHostName()
                + "-"
                + ProcessHandle.current().pid();
    ProvisionerApp app =
        ProvisionerApp.start(
            kc,
            OpenStackCinderClient.create(run.cloud()),
            new ProvisionerApp.Options(
                run.settings(),
                replica,
                run.workers(),
                run.resync(),
                RetryPolicy.DEFAULT,
                run.healthAddress(),
                run.healthPort(),
                run.election(),
                // Exit rather than compete again: the Deployment restarts it as a standby.
                () -> new Thread(() -> System.exit(1), "lost-lease").start(),
                ProvisionerApp.Options.DEFAULT_POOL_STATS,
                run.resolver(),
                run.copies(),
                run.backups()));
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  app.close();
                  stopped.countDown();
                },
                "shutdown"));
    stopped.await();
    return 0;
  }
}
