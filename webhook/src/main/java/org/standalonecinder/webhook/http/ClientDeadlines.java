package org.standalonecinder.webhook.http;

import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.RoutingContext;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Cuts off clients that hold the server without finishing a request (slow-loris): Vert.x only knows
 * idle timeouts, which a client defeats by sending a byte now and then.
 *
 * <ul>
 *   <li>A connection with no request in flight (idle between requests, or still sending a request's
 *       headers) is closed after the idle deadline (60 s by default). The TLS handshake has its own
 *       limit (Vert.x's, 10 s).
 *   <li>A request whose answer is not sent within the request deadline (30 s) of its headers (a
 *       body that trickles in) is cut off: its HTTP/2 stream is reset, or its HTTP/1.1 connection
 *       closed. The API server waits 30 s at most for a webhook, so nobody waits for an answer
 *       after that.
 * </ul>
 */
final class ClientDeadlines implements Handler<RoutingContext> {

  private final Vertx vertx;
  private final long idleMillis;
  private final long requestMillis;

  // Connections and their requests run on the connection's event loop; the map is shared by the
  // loops, each entry touched by one.
  private final Map<HttpConnection, Idle> connections = new ConcurrentHashMap<>();

  /**
   * @param idle how long a connection may go without a request in flight
   * @param request how long a request may take from its headers to its answer
   */
  ClientDeadlines(Vertx vertx, Duration idle, Duration request) {
    this.vertx = vertx;
    this.idleMillis = idle.toMillis();
    this.requestMillis = request.toMillis();
  }

  /**
   * Arms the idle deadline of a new connection; requests disarm it while they are in flight.
   *
   * @param closed run once the connection closes (a connection has one close handler: this one)
   */
  void connected(HttpConnection connection, Runnable closed) {
    Idle idle = new Idle(connection);
    connections.put(connection, idle);
    connection.closeHandler(
        v -> {
          Idle gone = connections.remove(connection);
          if (gone != null) {
            gone.disarm();
          }
          closed.run();
        });
    idle.arm();
  }

  @Override
  public void handle(RoutingContext ctx) {
    HttpConnection connection = ctx.request().connection();
    Idle idle = connections.get(connection);
    if (idle != null) {
      idle.started();
    }
    long timer =
        vertx.setTimer(
            requestMillis,
            id -> {
              if (!ctx.response().ended() && !ctx.response().closed()) {
                if (ctx.request().version() == HttpVersion.HTTP_2) {
                  ctx.response().reset();
                } else {
                  connection.close();
                }
              }
            });
    ctx.addEndHandler(
        v -> {
          vertx.cancelTimer(timer);
          if (idle != null) {
            idle.finished();
          }
        });
    ctx.next();
  }

  private final class Idle {
    private final HttpConnection connection;
    private int inFlight;
    private long timer = -1;

    Idle(HttpConnection connection) {
      this.connection = connection;
    }

    void arm() {
      disarm();
      timer = vertx.setTimer(idleMillis, id -> connection.close());
    }

    void disarm() {
      if (timer >= 0) {
        vertx.cancelTimer(timer);
        timer = -1;
      }
    }

    void started() {
      inFlight++;
      disarm();
    }

    void finished() {
      if (--inFlight == 0) {
        arm();
      }
    }
  }
}
