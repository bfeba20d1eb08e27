package org.standalonecinder.webhook.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.certs.CertificateAuthority;
import org.standalonecinder.certs.DynamicCertificateSource;
import org.standalonecinder.certs.RenewalPolicy;
import org.standalonecinder.webhook.admission.Decision;
import org.standalonecinder.webhook.http.WebhookServer;
import picocli.CommandLine;

/**
 * What {@code exposure} tells an admin, run as a pod would run it, against each kind of webhook.
 */
class ExposureCommandTest {

  private Vertx vertx;
  private WebhookServer server;

  @BeforeEach
  void vertx() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void stop() throws Exception {
    if (server != null) {
      server.close().toCompletionStage().toCompletableFuture().get();
    }
    vertx.close().toCompletionStage().toCompletableFuture().get();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a webhook that takes reviews from anyone | open | 1 | reachable, and it answered this"
            + " pod's review",
        "a webhook that takes the API server's certificate only | callers | 0 | reachable, and it"
            + " refused this pod's review (401)",
        "nothing reachable (a NetworkPolicy) | closed | 0 | not reachable from this pod",
      })
  void tellsWhetherAPodCanSendReviews(String name, String webhook, int exit, String says)
      throws Exception {
    Clock clock = Clock.systemUTC();
    CertificateAuthority ca = CertificateAuthority.generate("ca", Duration.ofDays(1), clock);
    int port;
    if ("closed".equals(webhook)) {
      try (var s = new java.net.ServerSocket(0)) {
        port = s.getLocalPort();
      }
    } else {
      server =
          new WebhookServer(
              vertx,
              new DynamicCertificateSource(
                  ca,
                  List.of("localhost"),
                  List.of("127.0.0.1"),
                  Duration.ofHours(1),
                  new RenewalPolicy(2.0 / 3),
                  clock),
              (request, mutating) -> Decision.allow(),
              () -> true,
              null,
              WebhookServer.TlsEngine.JDK);
      if ("callers".equals(webhook)) {
        CertificateAuthority clients =
            CertificateAuthority.generate("api-server-client-ca", Duration.ofDays(1), clock);
        server.requireCallers(
            new WebhookServer.Callers(List.of(clients.certificate()), Set.of("kube-apiserver")));
      }
      server.listen("127.0.0.1", 0).toCompletionStage().toCompletableFuture().get();
      port = server.port();
    }
    StringWriter out = new StringWriter();
    CommandLine cli = new CommandLine(new WebhookMain());
    cli.setOut(new PrintWriter(out));
    int code =
        cli.execute("exposure", "--url", "https://127.0.0.1:" + port, "--timeout-seconds", "3");
    assertThat(out.toString()).contains(says);
    assertThat(code).as(out.toString()).isEqualTo(exit);
  }
}
