package org.standalonecinder.webhook.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.webhook.cli.WebhookApp.Certificates;
import org.standalonecinder.webhook.http.WebhookServer;
import picocli.CommandLine;

/** {@code serve}'s options: what each choice means, and every refusal (all reported at once). */
class ServeCommandTest {

  @TempDir Path dir;

  private ServeCommand parse(String args) {
    ServeCommand c = new ServeCommand();
    c.env = java.util.Map.of();
    List<String> list = new ArrayList<>();
    for (String a : args.trim().split("\\s+")) {
      if (!a.isEmpty()) {
        list.add(a.replace("DIR", dir.toString()));
      }
    }
    new CommandLine(c).parseArgs(list.toArray(String[]::new));
    return c;
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "--local without --ca-out | --local | --local needs --ca-out FILE",
        "--ca-out without --local | --ca-out DIR/ca.crt | --ca-out goes with --local",
        "--local and --tls-dir | --local --ca-out DIR/ca.crt --tls-dir DIR | --local makes its own certificate; leave out --tls-dir",
        "--tls-dir that is no folder | --tls-dir DIR/none | --tls-dir DIR/none is not a folder",
        "--kubeconfig that is missing | --kubeconfig DIR/kc | --kubeconfig DIR/kc does not exist",
        "a port out of range | --port 70000 | --port: must be between 0 and 65535, was 70000",
        "refresh of zero | --refresh-seconds 0 | --refresh-seconds: must be between 1 and 86400, was 0",
        "a policy file that is a folder | --policy-file DIR | --policy-file DIR is not a file",
        "--san with --local | --local --ca-out DIR/ca.crt --san 10.0.0.1 | --san adds names to the certificate the CA Secret issues; not with --local or --tls-dir",
        "a --san that is no name | --san a/b | --san: 'a/b' is neither a DNS name nor an IP address",
        "a CA validity without unit | --ca-validity 365 | --ca-validity: '365' is not a duration of at least 30s (e.g. 365d, 12h, 90s)",
        "--client-name without --client-ca | --client-name kube-apiserver | --client-name goes with --client-ca",
        "--client-ca that is missing | --client-ca DIR/none.pem --client-name a | --client-ca DIR/none.pem: ",
        "--client-ca that holds no certificate | --client-ca DIR --client-name a | --client-ca DIR: ",
        "a CA validity too short | --ca-validity 10s | --ca-validity: '10s' is not a duration of at least 30s (e.g. 365d, 12h, 90s)",
        "a resolver that is no http URL | --resolver https://127.0.0.1:8090 | --resolver: 'https://127.0.0.1:8090' must be an http:// URL of the loopback sidecar",
        "a resolver deadline past the API server's | --resolver-timeout-ms 9000 | --resolver-timeout-ms: must be between 100 and 8000, was 9000",
        "a TLS engine that is none | --tls-engine boring | --tls-engine: 'boring' is not one of auto, openssl, jdk",
        "more connections a client than in all | --max-connections 10 --max-client-connections 20 | --max-connections, --max-client-connections: connection limits must be at least 1",
        "an idle deadline the API server outlasts | --idle-seconds 60 | --idle-seconds: must be more than 90, was 60: the API server keeps an unused connection that long",
        "a headers deadline of zero | --headers-seconds 0 | --headers-seconds: must be between 1 and 600, was 0"
      })
  void refusals(String name, String args, String problem) {
    // The one problem, from its start: another rule's complaint would fail the row.
    assertThat(parse(args).problems())
        .singleElement()
        .asString()
        .startsWith(problem.replace("DIR", dir.toString()));
  }

  /** A CA that signs for many (a cluster's client CA) says nothing without the name to look for. */
  @Test
  void aClientCaWithoutAClientNameIsRefused() throws Exception {
    Path ca = dir.resolve("client-ca.crt");
    Files.writeString(
        ca,
        org.standalonecinder.certs.CaBundle.of(
                List.of(
                    org.standalonecinder.certs.CertificateAuthority.generate(
                            "client-ca", Duration.ofDays(1), java.time.Clock.systemUTC())
                        .certificate()))
            .pem());
    assertThat(parse("--client-ca " + ca).problems())
        .containsExactly(
            "--client-ca needs --client-name: the name in the API server's client certificate;"
                + " the CA may have issued certificates to others");
    assertThat(parse("--client-ca " + ca + " --client-name kube-apiserver").problems()).isEmpty();
  }

  @Test
  void everyProblemIsReportedAtOnce() {
    assertThat(parse("--local --port -1 --refresh-seconds 0").problems()).hasSize(3);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "defaults | '' | PT2M | PT10S",
        "both given | --idle-seconds 91 --headers-seconds 3 | PT1M31S | PT3S",
      })
  void clientDeadlines(String name, String args, Duration idle, Duration headers) {
    WebhookServer.ClientLimits limits = parse(args).options().clientLimits();
    assertThat(limits.idle()).isEqualTo(idle);
    assertThat(limits.headers()).isEqualTo(headers);
    assertThat(limits.request()).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void extraNamesGoOnTheCertificateAsDnsNamesOrIps() {
    WebhookApp.Options o = parse("--san 127.0.0.1,webhook.example.org --san ::1").options();
    assertThat(o.extraIps()).containsExactly("127.0.0.1", "::1");
    assertThat(o.extraDnsNames()).containsExactly("webhook.example.org");
  }

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource({"365d, PT8760H", "12h, PT12H", "90m, PT1H30M", "45s, PT45S"})
  void caValidityIsADurationWithAUnit(String text, java.time.Duration expected) {
    assertThat(parse("--ca-validity " + text).options().caValidity()).isEqualTo(expected);
  }

  @Test
  void localListensOnLoopbackWithItsOwnCa() {
    WebhookApp.Options o = parse("--local --ca-out DIR/ca.crt --port 0").options();
    assertThat(o.host()).isEqualTo("127.0.0.1");
    assertThat(o.certificates()).isEqualTo(Certificates.LOCAL);
    assertThat(o.caOut()).isEqualTo(dir.resolve("ca.crt"));
  }

  @Test
  void inAClusterTheCaIsInASecretUnlessCertManagerMountsOne() throws Exception {
    WebhookApp.Options secret = parse("--namespace storage").options();
    assertThat(secret.certificates()).isEqualTo(Certificates.SECRET);
    assertThat(secret.host()).isEqualTo("0.0.0.0");
    assertThat(secret.provisionerUser())
        .isEqualTo("system:serviceaccount:storage:standalone-cinder");
    Files.createDirectories(dir.resolve("tls"));
    assertThat(parse("--tls-dir DIR/tls").options().certificates()).isEqualTo(Certificates.FILES);
  }

  @Test
  void aBadPolicyFileStopsTheStartWithItsProblems() throws Exception {
    Path policy = dir.resolve("policy.yaml");
    Files.writeString(policy, "mode: strict\ncrossnamespace: deny\n");
    Path kubeconfig = dir.resolve("kubeconfig");
    Files.writeString(
        kubeconfig,
        """
        apiVersion: v1
        kind: Config
        clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
        users: [{name: u, user: {token: t}}]
        contexts: [{name: x, context: {cluster: c, user: u}}]
        current-context: x
        """);
    java.io.StringWriter err = new java.io.StringWriter();
    int code =
        new CommandLine(new WebhookMain())
            .setErr(new java.io.PrintWriter(err, true))
            .execute(
                "serve",
                "--local",
                "--ca-out",
                dir.resolve("ca.crt").toString(),
                "--port",
                "0",
                "--kubeconfig",
                kubeconfig.toString(),
                "--policy-file",
                policy.toString());
    assertThat(code).isEqualTo(ServeCommand.BAD_CONFIG);
    assertThat(err.toString())
        .contains("mode 'strict' must be enforce or audit")
        .contains("unknown key 'crossnamespace'");
  }
}
