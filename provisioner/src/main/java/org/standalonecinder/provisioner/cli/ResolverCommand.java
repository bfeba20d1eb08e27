package org.standalonecinder.provisioner.cli;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.vertx.VertxHttpClientFactory;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfigLoader;
import org.standalonecinder.provisioner.cinder.openstack.config.ConfigException;
import org.standalonecinder.provisioner.clone.CloneResolver;
import org.standalonecinder.provisioner.clone.KubernetesClusterReader;
import org.standalonecinder.provisioner.clone.ResolverServer;
import org.standalonecinder.provisioner.provision.Placement;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * The clone check as a sidecar of the webhook: on loopback, with a token shared through a file (an
 * emptyDir both containers mount). The token is made here when the file does not exist.
 */
@Command(
    name = "resolver",
    mixinStandardHelpOptions = true,
    description = "Answer the webhook's clone checks (source claim -> Cinder volume) on loopback.")
final class ResolverCommand implements Callable<Integer> {

  private static final Logger LOG = LoggerFactory.getLogger(ResolverCommand.class);

  @Spec CommandSpec spec;

  @Option(
      names = "--cloud-config",
      defaultValue = "${env:CLOUD_CONFIG}",
      description = "cloud.conf, as for run (env CLOUD_CONFIG)")
  Path cloudConfig;

  @Option(
      names = "--provisioner-name",
      defaultValue = "${env:PROVISIONER_NAME:-" + ProvisionerSettings.DEFAULT_NAME + "}",
      description = "sources must have been provisioned by it (default ${DEFAULT-VALUE})")
  String provisionerName;

  @Option(
      names = "--zone-label",
      defaultValue = "${env:ZONE_LABEL:-" + Placement.DEFAULT_ZONE_LABEL + "}",
      description =
          "the node label that holds a node's zone, as for run: a clone's class must allow its"
              + " source's zone under it (env ZONE_LABEL, default ${DEFAULT-VALUE})")
  String zoneLabel;

  @Option(
      names = "--listen",
      defaultValue = "127.0.0.1",
      description = "a loopback address (default ${DEFAULT-VALUE})")
  String host;

  @Option(names = "--port", defaultValue = "8090", description = "port (default ${DEFAULT-VALUE})")
  int port;

  @Option(
      names = "--token-file",
      required = true,
      description = "the shared token; written (0600) with a new random token when missing")
  Path tokenFile;

  @Option(
      names = "--kubeconfig",
      defaultValue = "${env:KUBECONFIG}",
      description = "kubeconfig; in a pod the service account is used")
  Path kubeconfig;

  @Override
  public Integer call() throws Exception {
    List<String> problems = new ArrayList<>();
    CloudConfig cloud = null;
    try {
      cloud = CloudConfigLoader.load(cloudConfig, System.getenv());
    } catch (ConfigException e) {
      problems.add(e.getMessage());
    }
    Placement.Topology topology = null;
    if (cloud != null) {
      try {
        topology = new Placement.Topology(zoneLabel.trim(), cloud.ignoreVolumeAz());
      } catch (IllegalArgumentException e) {
        problems.add("--zone-label: " + e.getMessage());
      }
    }
    String token = null;
    try {
      token = token(tokenFile);
    } catch (IOException e) {
      problems.add("--token-file " + tokenFile + ": " + e.getMessage());
    }
    if (!problems.isEmpty()) {
      problems.forEach(
          p -> spec.commandLine().getErr().println("standalone-cinder resolver: " + p));
      return CheckCommand.BAD_CONFIG;
    }
    Config kc =
        kubeconfig != null
            ? Config.fromKubeconfig(Files.readString(kubeconfig))
            : Config.autoConfigure(null);
    Vertx vertx = Vertx.vertx();
    KubernetesClient client =
        new KubernetesClientBuilder()
            .withConfig(kc)
            .withHttpClientFactory(new VertxHttpClientFactory(vertx))
            .build();
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
    return 0;
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
