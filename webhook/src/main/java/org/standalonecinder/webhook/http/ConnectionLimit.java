package org.standalonecinder.webhook.http;

import io.vertx.core.http.HttpConnection;
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
 * pod (or node) from taking every slot, and when all are taken the address that holds the most
 * connections yields its newest to an address that holds fewer ({@link FairShare}): a flood from
 * many addresses cannot lock out the API server, which keeps one or two.
 */
final class ConnectionLimit {

  private final Predicate<HttpConnection> exempt;
  private final Shedding shedding;
  private final FairShare share;

  /**
   * @param exempt connections that neither count nor are refused (the verified API server)
   */
  ConnectionLimit(
      WebhookServer.ConnectionLimits limits, Predicate<HttpConnection> exempt, Shedding shedding) {
    this.exempt = exempt;
    this.shedding = shedding;
    this.share = new FairShare(limits.connections(), limits.perClient());
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
    io.vertx.core.Context context = io.vertx.core.Vertx.currentContext();
    FairShare.Admission admitted =
        share.admit(
            client,
            1,
            () -> {
              // Displaced: it no longer counts from now on, and is closed on its event loop.
              shedding.open.decrementAndGet();
              if (context == null) {
                connection.close();
              } else {
                context.runOnContext(v -> connection.close());
              }
            });
    for (int i = 0; i < admitted.displaced(); i++) {
      shedding.refused(
          Shedding.Reason.DISPLACED,
          "a connection of the client that held the most, for " + client);
    }
    if (admitted.refusal() == FairShare.Refusal.CLIENT) {
      shedding.refused(
          Shedding.Reason.CLIENT_CONNECTIONS,
          client + " holds the most connections one client may");
      return null;
    }
    if (admitted.refusal() == FairShare.Refusal.TOTAL) {
      shedding.refused(Shedding.Reason.CONNECTIONS, "every connection the webhook keeps is taken");
      return null;
    }
    shedding.open.incrementAndGet();
    FairShare.Holding holding = admitted.holding();
    return () -> {
      if (holding.release()) {
        shedding.open.decrementAndGet();
      }
    };
  }
}
