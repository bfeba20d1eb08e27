package org.standalonecinder.webhook.http;

import io.vertx.core.http.HttpConnection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * Bounds the connections clients hold open. Each costs memory outside the heap (the TLS engine's
 * state and buffers, about 40 KiB with BoringSSL), which no heap limit bounds: 3,000 connections of
 * a flood took the process over its Pod's 256 MiB. A connection over a limit is closed as soon as
 * its handshake is done, before it can send a request.
 *
 * <p>The API server, when it presents the client certificate the webhook checks ({@code
 * --client-ca}), is never turned away and does not count: a flood of other clients cannot lock it
 * out. Without that check, it is one client among others; the limit per client address keeps one
 * pod (or node) from taking every slot.
 */
final class ConnectionLimit {

  private final WebhookServer.ConnectionLimits limits;
  private final Predicate<HttpConnection> exempt;
  private final Shedding shedding;
  // Per client address; an entry leaves with the client's last connection.
  private final Map<String, Integer> byClient = new ConcurrentHashMap<>();

  /**
   * @param exempt connections that neither count nor are refused (the verified API server)
   */
  ConnectionLimit(
      WebhookServer.ConnectionLimits limits, Predicate<HttpConnection> exempt, Shedding shedding) {
    this.limits = limits;
    this.exempt = exempt;
    this.shedding = shedding;
  }

  /**
   * Takes a new connection's place, or refuses it.
   *
   * @return what gives the place back, to run once when the connection closes; null when the
   *     connection is refused (the caller closes it)
   */
  Runnable admit(HttpConnection connection) {
    if (exempt.test(connection)) {
      return () -> {};
    }
    String client =
        connection.remoteAddress() == null ? "" : connection.remoteAddress().hostAddress();
    Runnable leaveClient = () -> byClient.computeIfPresent(client, (k, n) -> n <= 1 ? null : n - 1);
    if (byClient.merge(client, 1, Integer::sum) > limits.perClient()) {
      leaveClient.run();
      shedding.refused(
          Shedding.Reason.CLIENT_CONNECTIONS,
          client + " holds " + limits.perClient() + " connections, the most one client may");
      return null;
    }
    if (shedding.open.incrementAndGet() > limits.connections()) {
      shedding.open.decrementAndGet();
      leaveClient.run();
      shedding.refused(
          Shedding.Reason.CONNECTIONS,
          limits.connections() + " connections open, the most the webhook keeps");
      return null;
    }
    return () -> {
      shedding.open.decrementAndGet();
      leaveClient.run();
    };
  }
}
