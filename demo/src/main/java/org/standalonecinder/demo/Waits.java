package org.standalonecinder.demo;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waiting for what a local installation or a test needs: a condition, an HTTP answer. */
public final class Waits {

  private Waits() {}

  /**
   * Waits for {@code condition}, polling every 100 ms; an IllegalStateException saying what after
   * the timeout. A look that the API server did not answer in time (the client's timeout, 429 or a
   * 5xx: a loaded control plane) counts as "not yet" and is named if the wait runs out; any other
   * error ends the wait at once.
   */
  public static void await(String what, BooleanSupplier condition, Duration timeout) {
    long end = System.nanoTime() + timeout.toNanos();
    RuntimeException unanswered = null;
    while (true) {
      try {
        if (condition.getAsBoolean()) {
          return;
        }
      } catch (KubernetesClientException e) {
        if (!unanswered(e)) {
          throw e;
        }
        unanswered = e;
      }
      if (System.nanoTime() > end) {
        throw new IllegalStateException(
            "timed out after "
                + timeout.toSeconds()
                + " s waiting for "
                + what
                + (unanswered == null ? "" : " (the API server's last answer: " + unanswered + ")"),
            unanswered);
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted waiting for " + what, e);
      }
    }
  }

  /** Whether the API server did not answer in time, or answered that it could not. */
  static boolean unanswered(KubernetesClientException e) {
    int code = e.getCode();
    if (code == 429 || code >= 500) {
      return true;
    }
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof java.util.concurrent.TimeoutException
          || t instanceof java.net.http.HttpTimeoutException) {
        return true;
      }
    }
    return false;
  }

  /** Whether {@code url} answers 200 now. */
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

  static boolean httpOk(String url) {
    try {
      return HTTP.send(
                  HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(2)).build(),
                  HttpResponse.BodyHandlers.discarding())
              .statusCode()
          == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
