package org.standalonecinder.webhook.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.standalonecinder.certs.CaBundle;
import org.standalonecinder.certs.CertificateAuthority;
import org.standalonecinder.certs.DynamicCertificateSource;
import org.standalonecinder.certs.RenewalPolicy;
import org.standalonecinder.webhook.admission.AdmissionController;
import org.standalonecinder.webhook.admission.Decision;
import org.standalonecinder.webhook.admission.WouldBlock;

/**
 * The attack: send reviews that need lookups and leave at once, again and again, to keep the
 * webhook's workers busy for nobody while the API server's reviews wait. Work for a client that
 * left is cancelled: never started if it still waits for a worker, interrupted if it runs.
 */
@ExtendWith(VertxExtension.class)
class AbandonedReviewsTest {

  private Vertx vertx;
  private WebhookServer server;
  private SSLContext trust;

  /** The reviews judged on a worker, by name, and those of them that saw their interrupt. */
  private final Set<String> judged = ConcurrentHashMap.newKeySet();

  private final Set<String> interrupted = ConcurrentHashMap.newKeySet();

  // Every review is looked up on a worker, where it waits as a slow API server would make it.
  private final AdmissionController slow =
      (request, mutating) -> {
        if (io.vertx.core.Context.isOnEventLoopThread()) {
          throw WouldBlock.INSTANCE;
        }
        judged.add(request.name());
        try {
          Thread.sleep(request.name().startsWith("slow") ? 30_000 : 0);
        } catch (InterruptedException e) {
          interrupted.add(request.name());
          throw new IllegalStateException("lookup interrupted");
        }
        return Decision.allow();
      };

  @BeforeEach
  void start(Vertx vertx, VertxTestContext ctx) throws Exception {
    this.vertx = vertx;
    Clock clock = Clock.systemUTC();
    CertificateAuthority ca = CertificateAuthority.generate("test-ca", Duration.ofDays(30), clock);
    DynamicCertificateSource certs =
        new DynamicCertificateSource(
            ca,
            List.of("localhost"),
            List.of("127.0.0.1"),
            Duration.ofHours(3),
            new RenewalPolicy(0.5),
            clock);
    server = new WebhookServer(vertx, certs, slow, () -> true, null, WebhookServer.TlsEngine.JDK);
    trust = CaBundle.of(List.of(ca.certificate())).clientContext();
    server.listen("127.0.0.1", 0).onComplete(ctx.succeedingThenComplete());
  }

  @AfterEach
  void stop(VertxTestContext ctx) {
    server.close().onComplete(ctx.succeedingThenComplete());
  }

  private SSLSocket send(String name) throws Exception {
    SSLSocket s = (SSLSocket) trust.getSocketFactory().createSocket("127.0.0.1", server.port());
    s.setSoTimeout(10_000);
    byte[] body =
        WebhookServerTest.review("admission.k8s.io/v1", "u-" + name, name)
            .getBytes(StandardCharsets.UTF_8);
    s.getOutputStream()
        .write(
            ("POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                    + "Content-Length: "
                    + body.length
                    + "\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
    s.getOutputStream().write(body);
    s.getOutputStream().flush();
    return s;
  }

  private static void await(String what, java.util.function.BooleanSupplier fact)
      throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!fact.getAsBoolean()) {
      assertThat(System.nanoTime()).as(what).isLessThan(until);
      Thread.sleep(20);
    }
  }

  @Test
  void aReviewBeingJudgedIsInterruptedWhenItsClientLeaves() throws Exception {
    SSLSocket s = send("slow-left");
    await("the review judged", () -> judged.contains("slow-left"));
    s.close();
    await("its lookup interrupted", () -> interrupted.contains("slow-left"));
  }

  @Test
  void aReviewWaitingForAWorkerIsNeverJudgedWhenItsClientLeaves() throws Exception {
    // Every worker busy, as a flood would make them.
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch busy = new CountDownLatch(20);
    for (int i = 0; i < 20; i++) {
      vertx.executeBlocking(
          () -> {
            busy.countDown();
            return release.await(30, TimeUnit.SECONDS);
          },
          false);
    }
    assertThat(busy.await(10, TimeUnit.SECONDS)).as("the 20 workers taken").isTrue();
    SSLSocket left = send("queued-left");
    SSLSocket stays = send("queued-stays");
    Thread.sleep(300); // both read and waiting for a worker
    left.close();
    Thread.sleep(300); // the departure seen
    release.countDown();
    String answer = new String(stays.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
    stays.close();
    assertThat(answer).isEqualTo("HTTP/1.1 200");
    assertThat(judged).contains("queued-stays").doesNotContain("queued-left");
  }
}
