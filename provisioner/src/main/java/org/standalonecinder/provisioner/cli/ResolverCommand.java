package org.standalonecinder.provisioner.cli;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.api.settings.Setting;
import org.standalonecinder.api.settings.SettingOptions;
import org.standalonecinder.api.settings.SettingsTable;
import org.standalonecinder.api.settings.Values;
import org.standalonecinder.provisioner.app.ProvisionerApp;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig;
import org.standalonecinder.provisioner.clone.CloneResolver;
import org.standalonecinder.provisioner.clone.KubernetesClusterReader;
import org.standalonecinder.provisioner.clone.ResolverServer;
import org.standalonecinder.provisioner.provision.Placement;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The clone check as a sidecar of the webhook: on loopback, with a token shared through a file (an
 * emptyDir both containers mount). The token is made here when the file does not exist.
 */
@Command(
    name = "resolver",
    mixinStandardHelpOptions = true,
    modelTransformer = SettingOptions.Transformer.class,
    description = "Answer the webhook's clone checks (source claim -> Cinder volume) on loopback.")
final class ResolverCommand implements Callable<Integer>, SettingOptions.Configured {

  private static final Logger LOG = LoggerFactory.getLogger(ResolverCommand.class);

  @Spec CommandSpec spec;

  /** The environment the settings are read from; tests give their own. */
  Map<String, String> env = System.getenv();

  static final Setting<String> LISTEN =
      Setting.of("--listen", SharedSettings::loopback)
          .byDefault("127.0.0.1")
          .doc("the clone check's address, loopback only");

  static final Setting<Integer> PORT =
      Setting.port("--port").byDefault("8090").doc("the clone check's port");

  static final Setting<Path> TOKEN_FILE =
      Setting.path("--token-file")
          .required()
          .doc("the shared token; written (0600) with a new random token when missing");

  static final SettingsTable TABLE =
      new SettingsTable(SharedSettings.ALL).and(List.of(LISTEN, PORT, TOKEN_FILE));

  @Override
  public SettingsTable settings() {
    return TABLE;
  }

  @Override
  public Integer call() throws Exception {
    Values v = TABLE.read(SettingOptions.given(spec), env);
    CloudConfig cloud = SharedSettings.cloud(v, env);
    Placement.Topology topology = SharedSettings.topology(v, cloud);
    Path tokenFile = v.get(TOKEN_FILE);
    String token = tokenOf(v, tokenFile);
    if (!v.problems().isEmpty()) {
      v.problems()
          .forEach(p -> spec.commandLine().getErr().println("standalone-cinder resolver: " + p));
      return CheckCommand.BAD_CONFIG;
    }
    String host = v.get(LISTEN);
    int port = v.get(PORT);
    String provisionerName = v.get(SharedSettings.PROVISIONER_NAME);
    Path kubeconfig = v.get(SharedSettings.KUBECONFIG);
    Config kc =
        kubeconfig != null
            ? Config.fromKubeconfig(Files.readString(kubeconfig))
            : Config.autoConfigure(null);
    Vertx vertx = Vertx.vertx();
    KubernetesClient client = ProvisionerApp.kubernetesClient(kc);
    CinderClient cinder = OpenStackCinderClient.create(cloud);
    KubernetesClusterReader cluster = new KubernetesClusterReader(client, null);
    ResolverServer server =
        new ResolverServer(
            vertx, new CloneResolver(cluster, cinder, provisionerName, topology), cluster, token);
    try {
      server.listen(host, port).toCompletionStage().toCompletableFuture().get();
    } catch (IllegalArgumentException e) {
      spec.commandLine().getErr().println("standalone-cinder resolver: " + e.getMessage());
      cinder.close();
      client.close();
      vertx.close();
      return CheckCommand.BAD_CONFIG;
    }
    LOG.info(
        "clone check on http://{}:{}{} (token in {})",
        host,
        server.port(),
        ResolverServer.PATH,
        tokenFile);
    untilStopped(server, cinder, client, vertx);
    return 0;
  }

  /** The token in the file (or a new one), null without a file; a problem when unreadable. */
  private static String tokenOf(Values v, Path tokenFile) {
    if (tokenFile == null) {
      return null;
    }
    try {
      return token(tokenFile);
    } catch (IOException e) {
      v.problem(TOKEN_FILE.flag() + " " + tokenFile + ": " + e.getMessage());
      return null;
    }
  }

  /** Serves until the process is told to stop, then closes everything. */
  private static void untilStopped(
      ResolverServer server, CinderClient cinder, KubernetesClient client, Vertx vertx)
      throws InterruptedException {
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  server.close();
                  cinder.close();
                  client.close();
                  vertx.close();
                  stopped.countDown();
                },
                "shutdown"));
    stopped.await();
  }

  /** The token in the file, or a new one written there (readable by this user only). */
  static String token(Path file) throws IOException {
    if (Files.exists(file)) {
      String t = Files.readString(file).trim();
      if (t.length() < 16) {
        throw new IOException("holds no token of at least 16 characters");
      }
      return t;
    }
    byte[] random = new byte[32];
    new SecureRandom().nextBytes(random);
    String t = Base64.getUrlEncoder().withoutPadding().encodeToString(random);
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.writeString(tmp, t);
    Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-------"));
    // Renamed into place, so the webhook never reads half a token.
    Files.move(tmp, file, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    return t;
  }
}
