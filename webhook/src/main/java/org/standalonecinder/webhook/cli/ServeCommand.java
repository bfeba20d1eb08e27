package org.standalonecinder.webhook.cli;

import io.fabric8.kubernetes.client.Config;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.standalonecinder.api.settings.SettingOptions;
import org.standalonecinder.api.settings.SettingsTable;
import org.standalonecinder.api.settings.Values;
import org.standalonecinder.webhook.cli.WebhookApp.Certificates;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code serve}: the admission webhook, in a cluster or on loopback for trying it by hand. */
@Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    modelTransformer = SettingOptions.Transformer.class,
    description = {
      "Run the admission webhook (POST /mutate, /validate; /healthz, /readyz, /metrics).",
      "In a cluster: the CA lives in a Secret and the caBundle is injected (or --tls-dir for"
          + " cert-manager).",
      "By hand: --local --ca-out ca.crt listens on 127.0.0.1 with a fresh CA written to ca.crt,"
          + " looking objects up through --kubeconfig (or the usual kubeconfig)."
    })
final class ServeCommand implements Callable<Integer>, SettingOptions.Configured {

  @Spec CommandSpec spec;

  static final int BAD_CONFIG = 2;

  /** The environment the settings are read from; tests give their own. */
  Map<String, String> env = System.getenv();

  private Values values;
  private WebhookApp.Options options;

  @Override
  public SettingsTable settings() {
    return ServeSettings.TABLE;
  }

  private void read() {
    if (values == null) {
      values = ServeSettings.TABLE.read(SettingOptions.given(spec), env);
      options = ServeSettings.options(values);
    }
  }

  /** Every problem with the settings at once; empty when they can run. */
  List<String> problems() {
    read();
    return values.problems();
  }

  /** What the settings make; null when there are {@link #problems()}. */
  WebhookApp.Options options() {
    read();
    return options;
  }

  @Override
  public Integer call() throws Exception {
    List<String> problems = problems();
    if (!problems.isEmpty()) {
      problems.forEach(
          p -> spec.commandLine().getErr().println("standalone-cinder-webhook serve: " + p));
      return BAD_CONFIG;
    }
    Path kubeconfig = values.get(ServeSettings.KUBECONFIG);
    Config kube =
        kubeconfig != null
            ? Config.fromKubeconfig(Files.readString(kubeconfig))
            : Config.autoConfigure(null);
    WebhookApp app;
    try {
      app = WebhookApp.start(kube, options());
    } catch (IllegalArgumentException e) {
      spec.commandLine().getErr().println("standalone-cinder-webhook serve: " + e.getMessage());
      return BAD_CONFIG;
    }
    if (options.certificates() == Certificates.LOCAL) {
      Path caOut = options.caOut();
      spec.commandLine()
          .getOut()
          .printf(
              "webhook on https://127.0.0.1:%d (trust %s), e.g.%n  curl --cacert %s"
                  + " https://127.0.0.1:%d/readyz%n",
              app.port(), caOut, caOut, app.port());
    }
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
