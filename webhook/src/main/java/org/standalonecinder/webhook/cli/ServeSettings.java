package org.standalonecinder.webhook.cli;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.standalonecinder.api.settings.Setting;
import org.standalonecinder.api.settings.SettingsTable;
import org.standalonecinder.api.settings.Values;
import org.standalonecinder.webhook.cli.WebhookApp.Certificates;
import org.standalonecinder.webhook.http.WebhookServer;

/**
 * {@code serve}'s settings: one table (flag, variable, parser, default, doc) and what they make
 * together. docs/webhook.md lists the same rows ({@code SettingsDocsTest}); the defaults match
 * manifests/base.
 */
final class ServeSettings {

  private ServeSettings() {}

  static final Setting<Boolean> LOCAL =
      Setting.onOff("--local")
          .byDefault("false")
          .doc("listen on 127.0.0.1 with an in-memory CA, for trying it by hand");

  static final Setting<Path> CA_OUT =
      Setting.path("--ca-out")
          .shownDefault("none")
          .doc("with --local: write the CA certificate here");

  static final Setting<Path> TLS_DIR =
      Setting.path("--tls-dir")
          .shownDefault("the CA in --ca-secret")
          .doc("serve tls.crt and tls.key from this folder (cert-manager's mount)");

  static final Setting<WebhookServer.TlsEngine> TLS_ENGINE =
      Setting.oneOf("--tls-engine", WebhookServer.TlsEngine.class)
          .byDefault("auto")
          .doc("auto (BoringSSL where it loads, else the JDK), openssl or jdk");

  static final Setting<String> LISTEN =
      Setting.text("--listen")
          .byDefault("0.0.0.0")
          .doc("the address to listen on; 127.0.0.1 with --local");

  static final Setting<Integer> PORT =
      Setting.port("--port").byDefault("8443").doc("the port; 0 for any");

  static final Setting<Path> KUBECONFIG =
      Setting.path("--kubeconfig")
          .shownDefault("in-cluster or ~/.kube")
          .doc("the kubeconfig file to look objects up with");

  static final Setting<String> NAMESPACE =
      Setting.text("--namespace")
          .env("POD_NAMESPACE")
          .byDefault("standalone-cinder")
          .doc("the webhook's namespace");

  static final Setting<String> SERVICE =
      Setting.text("--service").byDefault("standalone-cinder-webhook").doc("the webhook's Service");

  static final Setting<String> WEBHOOK_CONFIGURATION =
      Setting.text("--webhook-configuration")
          .byDefault("standalone-cinder")
          .doc("the name of the Mutating- and ValidatingWebhookConfiguration");

  static final Setting<String> CA_SECRET =
      Setting.text("--ca-secret")
          .byDefault("standalone-cinder-webhook-ca")
          .doc("the Secret holding the CA");

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9.:*-]+");

  static final Setting<List<String>> SAN =
      Setting.list("--san")
          .then(
              names -> {
                for (String n : names) {
                  if (!NAME.matcher(n).matches()) {
                    throw new IllegalArgumentException(
                        "'" + n + "' is neither a DNS name nor an IP address");
                  }
                }
                return names;
              })
          .shownDefault("the Service's names")
          .doc(
              "an extra name (DNS or IP) on the certificate the CA Secret issues, e.g. 127.0.0.1"
                  + " for an API server that calls the webhook by url; repeatable");

  private static final Pattern DURATION = Pattern.compile("([0-9]{1,9})([dhms])");

  static final Setting<Duration> CA_VALIDITY =
      Setting.of("--ca-validity", ServeSettings::caValidity)
          .byDefault("365d")
          .doc(
              "the life of a CA the webhook makes for its Secret, e.g. 365d, 90d, 12h; rotated at"
                  + " 2/3, the old one trusted until it expires");

  static final Setting<Path> POLICY_FILE =
      Setting.path("--policy-file")
          .shownDefault("safe defaults")
          .doc("the admin's clone policy (YAML), re-read every --refresh-seconds");

  static final Setting<String> PROVISIONER_NAME =
      Setting.text("--provisioner-name")
          .byDefault("openstack.org/standalone-cinder")
          .doc("the provisioner whose classes and claims are guarded");

  static final Setting<String> PROVISIONER_USER =
      Setting.text("--provisioner-user")
          .shownDefault("the Pod's service account, standalone-cinder in --namespace")
          .doc("the provisioner's user, the only one who may set k8s.io/CloneOf");

  static final Setting<Integer> REFRESH_SECONDS =
      Setting.integer("--refresh-seconds", 1, 86400)
          .byDefault("30")
          .doc("how often certificates and the policy file are re-checked");

  static final Setting<URI> RESOLVER =
      Setting.of("--resolver", ServeSettings::resolver)
          .shownDefault("none: clones are checked when provisioned")
          .doc(
              "the provisioner's clone check beside it, e.g. http://127.0.0.1:8090, asked whether"
                  + " Cinder can make each clone");

  static final Setting<Path> RESOLVER_TOKEN_FILE =
      Setting.path("--resolver-token-file")
          .byDefault("/run/standalone-cinder/resolver-token")
          .doc("the token the clone check writes");

  static final Setting<Integer> RESOLVER_TIMEOUT_MS =
      Setting.integer("--resolver-timeout-ms", 100, 8000)
          .byDefault("3000")
          .doc("the deadline of one clone check, well under the API server's 10 s");

  static final Setting<Path> CLIENT_CA =
      Setting.path("--client-ca")
          .shownDefault("any caller")
          .doc(
              "take reviews only from callers with a client certificate of these CAs (PEM): the"
                  + " API server's, set in its AdmissionConfiguration");

  static final Setting<List<String>> CLIENT_NAME =
      Setting.list("--client-name")
          .shownDefault("any name")
          .doc(
              "with --client-ca: a name (common name or DNS name) the caller's certificate must"
                  + " carry; repeatable");

  static final Setting<Integer> MAX_CONNECTIONS =
      Setting.integer("--max-connections", 1, 1_000_000)
          .byDefault("1024")
          .doc(
              "open client connections at most, the API server's verified by --client-ca aside;"
                  + " more are closed after the handshake");

  static final Setting<Integer> MAX_CLIENT_CONNECTIONS =
      Setting.integer("--max-client-connections", 1, 1_000_000)
          .byDefault("64")
          .doc("of those, from one client address; an API server keeps one HTTP/2 connection");

  static final Setting<Integer> IDLE_SECONDS =
      Setting.integer("--idle-seconds", 1, 3600)
          .byDefault("120")
          .then(
              n -> {
                if (n <= WebhookServer.ClientLimits.API_SERVER_IDLE.toSeconds()) {
                  throw new IllegalArgumentException(
                      "must be more than "
                          + WebhookServer.ClientLimits.API_SERVER_IDLE.toSeconds()
                          + ", was "
                          + n
                          + ": the API server keeps an unused connection that long, and a review it"
                          + " sends as the webhook closes the connection fails (the claim write"
                          + " with it)");
                }
                return n;
              })
          .doc(
              "a connection with nothing in flight is closed after this; more than the 90 s the API"
                  + " server keeps one it does not use, so that the API server closes it first");

  static final Setting<Integer> HEADERS_SECONDS =
      Setting.integer("--headers-seconds", 1, 600)
          .byDefault("10")
          .doc(
              "an HTTP/1.1 request's headers must be complete this long after its first byte;"
                  + " a request then has 30 s from its headers to its answer");

  static final SettingsTable TABLE =
      new SettingsTable(
          List.of(
              LOCAL,
              CA_OUT,
              TLS_DIR,
              TLS_ENGINE,
              LISTEN,
              PORT,
              KUBECONFIG,
              NAMESPACE,
              SERVICE,
              WEBHOOK_CONFIGURATION,
              CA_SECRET,
              SAN,
              CA_VALIDITY,
              POLICY_FILE,
              PROVISIONER_NAME,
              PROVISIONER_USER,
              REFRESH_SECONDS,
              RESOLVER,
              RESOLVER_TOKEN_FILE,
              RESOLVER_TIMEOUT_MS,
              CLIENT_CA,
              CLIENT_NAME,
              MAX_CONNECTIONS,
              MAX_CLIENT_CONNECTIONS,
              IDLE_SECONDS,
              HEADERS_SECONDS));

  /** A duration with a unit ({@code 365d}, {@code 12h}, {@code 30m}, {@code 90s}), 30 s or more. */
  static Duration caValidity(String text) {
    Matcher m = DURATION.matcher(text.trim());
    Duration d = null;
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      d =
          switch (m.group(2)) {
            case "d" -> Duration.ofDays(n);
            case "h" -> Duration.ofHours(n);
            case "m" -> Duration.ofMinutes(n);
            default -> Duration.ofSeconds(n);
          };
    }
    if (d == null || d.compareTo(Duration.ofSeconds(30)) < 0) {
      throw new IllegalArgumentException(
          "'" + text.trim() + "' is not a duration of at least 30s (e.g. 365d, 12h, 90s)");
    }
    return d;
  }

  private static URI resolver(String text) {
    URI u;
    try {
      u = URI.create(text.trim());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("'" + text.trim() + "' is not a URL");
    }
    if (!"http".equals(u.getScheme()) || u.getHost() == null) {
      throw new IllegalArgumentException(
          "'" + text.trim() + "' must be an http:// URL of the loopback sidecar");
    }
    return u;
  }

  /** What the values make together, or null with the reasons among {@link Values#problems()}. */
  static WebhookApp.Options options(Values v) {
    boolean local = Boolean.TRUE.equals(v.get(LOCAL));
    Path caOut = v.get(CA_OUT);
    Path tlsDir = v.get(TLS_DIR);
    if (local && caOut == null) {
      v.problem("--local needs --ca-out FILE: where to write the CA certificate to trust");
    }
    if (!local && caOut != null) {
      v.problem("--ca-out goes with --local");
    }
    if ((local || tlsDir != null) && v.given(SAN)) {
      v.problem(
          "--san adds names to the certificate the CA Secret issues; not with --local or --tls-dir");
    }
    if (local && tlsDir != null) {
      v.problem("--local makes its own certificate; leave out --tls-dir");
    }
    if (tlsDir != null && !Files.isDirectory(tlsDir)) {
      v.problem("--tls-dir " + tlsDir + " is not a folder");
    }
    Path policy = v.get(POLICY_FILE);
    if (policy != null && Files.exists(policy) && !Files.isRegularFile(policy)) {
      v.problem("--policy-file " + policy + " is not a file");
    }
    Path kubeconfig = v.get(KUBECONFIG);
    if (kubeconfig != null && !Files.isRegularFile(kubeconfig)) {
      v.problem("--kubeconfig " + kubeconfig + " does not exist");
    }
    WebhookServer.ConnectionLimits limits =
        v.get(MAX_CONNECTIONS) == null || v.get(MAX_CLIENT_CONNECTIONS) == null
            ? null
            : v.attempt(
                "--max-connections, --max-client-connections",
                () ->
                    new WebhookServer.ConnectionLimits(
                        v.get(MAX_CONNECTIONS), v.get(MAX_CLIENT_CONNECTIONS)));
    List<String> clientNames = v.get(CLIENT_NAME) == null ? List.of() : v.get(CLIENT_NAME);
    Path clientCa = v.get(CLIENT_CA);
    if (!clientNames.isEmpty() && clientCa == null) {
      v.problem("--client-name goes with --client-ca");
    }
    if (clientCa != null && clientNames.isEmpty()) {
      // A CA such as a cluster's front-proxy or client CA signs certificates for many: the name
      // is what tells the API server's from theirs.
      v.problem(
          "--client-ca needs --client-name: the name in the API server's client certificate;"
              + " the CA may have issued certificates to others");
    }
    WebhookServer.Callers callers = null;
    if (clientCa != null) {
      try {
        callers = WebhookServer.Callers.of(clientCa, Set.copyOf(clientNames));
      } catch (java.io.IOException | java.security.cert.CertificateException e) {
        v.problem("--client-ca " + clientCa + ": " + e.getMessage());
      }
    }
    if (!v.problems().isEmpty()) {
      return null;
    }
    String namespace = v.get(NAMESPACE);
    return new WebhookApp.Options(
        local ? "127.0.0.1" : v.get(LISTEN),
        v.get(PORT),
        local ? Certificates.LOCAL : tlsDir != null ? Certificates.FILES : Certificates.SECRET,
        caOut,
        tlsDir,
        namespace,
        v.get(SERVICE),
        v.get(WEBHOOK_CONFIGURATION),
        v.get(CA_SECRET),
        policy,
        v.get(PROVISIONER_NAME),
        v.given(PROVISIONER_USER)
            ? v.get(PROVISIONER_USER)
            : "system:serviceaccount:" + namespace + ":standalone-cinder",
        Duration.ofSeconds(v.get(REFRESH_SECONDS)),
        v.get(RESOLVER),
        v.get(RESOLVER_TOKEN_FILE),
        Duration.ofMillis(v.get(RESOLVER_TIMEOUT_MS)),
        v.get(SAN),
        v.get(CA_VALIDITY),
        v.get(TLS_ENGINE),
        callers,
        limits,
        new WebhookServer.ClientLimits(
            Duration.ofSeconds(v.get(IDLE_SECONDS)),
            Duration.ofSeconds(v.get(HEADERS_SECONDS)),
            WebhookServer.ClientLimits.DEFAULT.request()));
  }
}
