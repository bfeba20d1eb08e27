package org.standalonecinder.webhook.cli;

import io.fabric8.kubernetes.client.Config;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.standalonecinder.webhook.cli.WebhookApp.Certificates;
import org.standalonecinder.webhook.http.WebhookServer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code serve}: the admission webhook, in a cluster or on loopback for trying it by hand. */
@Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    description = {
      "Run the admission webhook (POST /mutate, /validate; /healthz, /readyz, /metrics).",
      "In a cluster: the CA lives in a Secret and the caBundle is injected (or --tls-dir for"
          + " cert-manager).",
      "By hand: --local --ca-out ca.crt listens on 127.0.0.1 with a fresh CA written to ca.crt,"
          + " looking objects up through --kubeconfig (or the usual kubeconfig)."
    })
final class ServeCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  static final int BAD_CONFIG = 2;

  @Option(names = "--local", description = "listen on 127.0.0.1 with an in-memory CA")
  boolean local;

  @Option(names = "--ca-out", description = "with --local: write the CA certificate here")
  Path caOut;

  @Option(names = "--tls-dir", description = "serve tls.crt/tls.key (cert-manager's mount)")
  Path tlsDir;

  @Option(
      names = "--tls-engine",
      defaultValue = "auto",
      converter = TlsEngineConverter.class,
      description =
          "auto (BoringSSL where it loads, else the JDK), openssl or jdk (default ${DEFAULT-VALUE})")
  WebhookServer.TlsEngine tlsEngine;

  @Option(
      names = "--listen",
      defaultValue = "0.0.0.0",
      description = "address to listen on (default ${DEFAULT-VALUE}; 127.0.0.1 with --local)")
  String host;

  @Option(
      names = "--port",
      defaultValue = "8443",
      description = "port (default ${DEFAULT-VALUE}; 0 for any)")
  int port;

  @Option(names = "--kubeconfig", description = "kubeconfig file (default: in-cluster or ~/.kube)")
  Path kubeconfig;

  @Option(
      names = "--namespace",
      defaultValue = "${env:POD_NAMESPACE:-standalone-cinder}",
      description = "the webhook's namespace (default ${DEFAULT-VALUE})")
  String namespace;

  @Option(
      names = "--service",
      defaultValue = "standalone-cinder-webhook",
      description = "the webhook's Service (default ${DEFAULT-VALUE})")
  String service;

  @Option(
      names = "--webhook-configuration",
      defaultValue = "standalone-cinder",
      description =
          "name of the Mutating- and ValidatingWebhookConfiguration (default ${DEFAULT-VALUE})")
  String webhookConfiguration;

  @Option(
      names = "--ca-secret",
      defaultValue = "standalone-cinder-webhook-ca",
      description = "Secret holding the CA (default ${DEFAULT-VALUE})")
  String caSecret;

  @Option(
      names = "--san",
      split = ",",
      description =
          "an extra name (DNS or IP) on the serving certificate besides the Service's, e.g."
              + " 127.0.0.1 for an API server that calls the webhook by url; repeatable")
  List<String> extraNames = new ArrayList<>();

  @Option(
      names = "--ca-validity",
      defaultValue = "365d",
      description =
          "life of a CA the webhook makes for its Secret, e.g. 365d, 90d, 12h (default"
              + " ${DEFAULT-VALUE}); rotated at 2/3, the old one trusted until it expires")
  String caValidity;

  @Option(names = "--policy-file", description = "the admin policy (YAML); none: safe defaults")
  Path policyFile;

  @Option(
      names = "--provisioner-name",
      defaultValue = "openstack.org/standalone-cinder",
      description =
          "the provisioner whose classes and claims are guarded (default ${DEFAULT-VALUE})")
  String provisionerName;

  @Option(
      names = "--provisioner-user",
      description =
          "the provisioner's user, the only one who may set k8s.io/CloneOf (default"
              + " system:serviceaccount:<namespace>:standalone-cinder)")
  String provisionerUser;

  @Option(
      names = "--refresh-seconds",
      defaultValue = "30",
      description =
          "how often certificates and the policy file are re-checked (default ${DEFAULT-VALUE})")
  int refreshSeconds;

  @Option(
      names = "--resolver",
      description =
          "the provisioner's resolver sidecar, e.g. http://127.0.0.1:8090, asked whether Cinder"
              + " can make each clone; none: clones are checked when provisioned")
  String resolver;

  @Option(
      names = "--resolver-token-file",
      defaultValue = "/run/standalone-cinder/resolver-token",
      description = "the token the resolver writes (default ${DEFAULT-VALUE})")
  Path resolverTokenFile;

  @Option(
      names = "--resolver-timeout-ms",
      defaultValue = "3000",
      description =
          "deadline of one check, well under the API server's 10 s (default ${DEFAULT-VALUE})")
  long resolverTimeoutMillis;

  @Option(
      names = "--client-ca",
      description =
          "take reviews only from callers with a client certificate of these CAs (PEM): the API"
              + " server's, set in its AdmissionConfiguration (docs/webhook.md)")
  Path clientCa;

  @Option(
      names = "--client-name",
      description =
          "with --client-ca: a name (common name or DNS name) the caller's certificate must carry;"
              + " repeatable")
  List<String> clientNames = new ArrayList<>();

  @Option(
      names = "--max-connections",
      defaultValue = "1024",
      description =
          "open client connections at most, the API server's verified by --client-ca aside; more"
              + " are closed after the handshake (default ${DEFAULT-VALUE})")
  int maxConnections;

  @Option(
      names = "--max-client-connections",
      defaultValue = "64",
      description =
          "of those, from one client address (default ${DEFAULT-VALUE}); an API server keeps one"
              + " HTTP/2 connection")
  int maxClientConnections;

  /** Every problem with the options at once; empty when they can run. */
  List<String> problems() {
    List<String> problems = new ArrayList<>();
    if (local && caOut == null) {
      problems.add("--local needs --ca-out FILE: where to write the CA certificate to trust");
    }
    if (!local && caOut != null) {
      problems.add("--ca-out goes with --local");
    }
    if ((local || tlsDir != null) && !extraNames.isEmpty()) {
      problems.add(
          "--san adds names to the certificate the CA Secret issues; not with --local or --tls-dir");
    }
    for (String n : extraNames) {
      if (!n.matches("[A-Za-z0-9.:*-]+")) {
        problems.add("--san " + n + " is neither a DNS name nor an IP address");
      }
    }
    if (caValidity() == null) {
      problems.add(
          "--ca-validity "
              + caValidity
              + " is not a duration of at least 30s (e.g. 365d, 12h, 90s)");
    }
    if (local && tlsDir != null) {
      problems.add("--local makes its own certificate; leave out --tls-dir");
    }
    if (tlsDir != null && !Files.isDirectory(tlsDir)) {
      problems.add("--tls-dir " + tlsDir + " is not a folder");
    }
    if (policyFile != null && Files.exists(policyFile) && !Files.isRegularFile(policyFile)) {
      problems.add("--policy-file " + policyFile + " is not a file");
    }
    if (kubeconfig != null && !Files.isRegularFile(kubeconfig)) {
      problems.add("--kubeconfig " + kubeconfig + " does not exist");
    }
    if (port < 0 || port > 65535) {
      problems.add("--port " + port + " is not a port");
    }
    if (resolver != null && !resolver.isBlank()) {
      try {
        URI u = URI.create(resolver);
        if (!"http".equals(u.getScheme()) || u.getHost() == null) {
          problems.add(
              "--resolver " + resolver + " must be an http:// URL of the loopback sidecar");
        }
      } catch (IllegalArgumentException e) {
        problems.add("--resolver " + resolver + " is not a URL");
      }
    }
    if (resolverTimeoutMillis < 100 || resolverTimeoutMillis > 8000) {
      problems.add(
          "--resolver-timeout-ms must be between 100 and 8000 (the API server waits 10 s), was "
              + resolverTimeoutMillis);
    }
    if (refreshSeconds < 1) {
      problems.add("--refresh-seconds must be at least 1");
    }
    try {
      new WebhookServer.ConnectionLimits(maxConnections, maxClientConnections);
    } catch (IllegalArgumentException e) {
      problems.add("--max-connections, --max-client-connections: " + e.getMessage());
    }
    if (!clientNames.isEmpty() && clientCa == null) {
      problems.add("--client-name goes with --client-ca");
    }
    if (clientCa != null) {
      try {
        callers();
      } catch (java.io.IOException | java.security.cert.CertificateException e) {
        problems.add("--client-ca " + clientCa + ": " + e.getMessage());
      }
    }
    return problems;
  }

  WebhookApp.Options options() {
    return new WebhookApp.Options(
        local ? "127.0.0.1" : host,
        port,
        local ? Certificates.LOCAL : tlsDir != null ? Certificates.FILES : Certificates.SECRET,
        caOut,
        tlsDir,
        namespace,
        service,
        webhookConfiguration,
        caSecret,
        policyFile,
        provisionerName,
        provisionerUser != null
            ? provisionerUser
            : "system:serviceaccount:" + namespace + ":standalone-cinder",
        Duration.ofSeconds(refreshSeconds),
        resolver == null || resolver.isBlank() ? null : URI.create(resolver),
        resolverTokenFile,
        Duration.ofMillis(resolverTimeoutMillis),
        extraNames,
        caValidity(),
        tlsEngine,
        callersOrNull(),
        new WebhookServer.ConnectionLimits(maxConnections, maxClientConnections));
  }

  private WebhookServer.Callers callers()
      throws java.io.IOException, java.security.cert.CertificateException {
    return WebhookServer.Callers.of(clientCa, java.util.Set.copyOf(clientNames));
  }

  private WebhookServer.Callers callersOrNull() {
    try {
      return clientCa == null ? null : callers();
    } catch (java.io.IOException | java.security.cert.CertificateException e) {
      throw new IllegalStateException(
          "--client-ca was checked in problems(): " + e.getMessage(), e);
    }
  }

  /** Lower-case names on the command line; a wrong one lists the right ones. */
  static final class TlsEngineConverter
      implements CommandLine.ITypeConverter<WebhookServer.TlsEngine> {
    @Override
    public WebhookServer.TlsEngine convert(String value) {
      for (WebhookServer.TlsEngine e : WebhookServer.TlsEngine.values()) {
        if (e.name().equalsIgnoreCase(value)) {
          return e;
        }
      }
      throw new CommandLine.TypeConversionException(
          "'" + value + "' is not one of auto, openssl, jdk");
    }
  }

  /** {@code --ca-validity} as a duration ({@code 365d}, {@code 12h}, {@code 30m}, {@code 90s}). */
  Duration caValidity() {
    var m = java.util.regex.Pattern.compile("([0-9]{1,9})([dhms])").matcher(caValidity.trim());
    if (!m.matches()) {
      return null;
    }
    long n = Long.parseLong(m.group(1));
    Duration d =
        switch (m.group(2)) {
          case "d" -> Duration.ofDays(n);
          case "h" -> Duration.ofHours(n);
          case "m" -> Duration.ofMinutes(n);
          default -> Duration.ofSeconds(n);
        };
    return d.compareTo(Duration.ofSeconds(30)) < 0 ? null : d;
  }

  @Override
  public Integer call() throws Exception {
    List<String> problems = problems();
    if (!problems.isEmpty()) {
      problems.forEach(
          p -> spec.commandLine().getErr().println("standalone-cinder-webhook serve: " + p));
      return BAD_CONFIG;
    }
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
    if (local) {
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
