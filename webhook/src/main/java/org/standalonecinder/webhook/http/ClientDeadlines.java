package org.standalonecinder.webhook.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.net.impl.ConnectionBase;
import io.vertx.ext.web.RoutingContext;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Cuts off clients that hold the server without finishing a request (slow-loris), and keeps an idle
 * connection longer than its client does: Vert.x only knows idle timeouts, which a client defeats
 * by sending a byte now and then.
 *
 * <ul>
 *   <li>A connection with nothing in flight is kept for the idle deadline (120 s by default). It
 *       must outlast the client's own: the API server drops a connection it has not used for 90 s
 *       (client-go's transport), and if the server closed first, a review sent on the connection as
 *       it closes fails with EOF and is not retried (a POST) — that claim write is refused.
 *   <li>Once the first byte of an HTTP/1.1 request arrives, its headers must be complete within the
 *       headers deadline (10 s). HTTP/2 (what API servers speak) is held by the idle deadline
 *       alone: its connections carry pings and settings between requests, so a byte there does not
 *       start a request.
 *   <li>A request whose answer is not sent within the request deadline (30 s) of its headers (a
 *       body that trickles in) is cut off: its HTTP/2 stream is reset, or its HTTP/1.1 connection
 *       closed. The API server waits 30 s at most for a webhook, so nobody waits for an answer
 *       after that.
 * </ul>
 *
 * The TLS handshake has its own limit (Vert.x's, 10 s).
 */
final class ClientDeadlines implements Handler<RoutingContext> {

  /** Vert.x's name for the HTTP/1.x request decoder in a connection's pipeline. */
  private static final String HTTP1_DECODER = "httpDecoder";

  private final Vertx vertx;
  private final long idleMillis;
  private final long headersMillis;
  private final long requestMillis;

  // Connections and their requests run on the connection's event loop; the map is shared by the
  // loops, each entry touched by one.
  private final Map<HttpConnection, Idle> connections = new ConcurrentHashMap<>();

  ClientDeadlines(Vertx vertx, WebhookServer.ClientLimits limits) {
    this.vertx = vertx;
    this.idleMillis = limits.idle().toMillis();
    this.headersMillis = limits.headers().toMillis();
    this.requestMillis = limits.request().toMillis();
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
    watchFirstBytes(connection, idle);
    idle.arm(idleMillis);
  }

  /**
   * Vert.x tells of a request only once its headers are complete, so the bytes before that are seen
   * in the connection's pipeline, just ahead of the HTTP/1.x decoder (after TLS). Vert.x's internal
   * connection class is the only way there; where it is not (another Vert.x), the idle deadline
   * alone holds headers, as it did before.
   */
  private void watchFirstBytes(HttpConnection connection, Idle idle) {
    if (!(connection instanceof ConnectionBase base)) {
      return;
    }
    ChannelPipeline pipeline = base.channel().pipeline();
    if (pipeline.get(HTTP1_DECODER) == null) {
      return;
    }
    pipeline.addBefore(
        HTTP1_DECODER,
        "standalone-cinder-first-byte",
        new ChannelInboundHandlerAdapter() {
          @Override
          public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof ByteBuf bytes && bytes.isReadable()) {
              idle.bytesArrived();
            }
            ctx.fireChannelRead(msg);
          }
        });
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
    private boolean headersArriving;

    Idle(HttpConnection connection) {
      this.connection = connection;
    }

    void arm(long millis) {
      disarm();
      timer = vertx.setTimer(millis, id -> connection.close());
    }

    void disarm() {
      if (timer >= 0) {
        vertx.cancelTimer(timer);
        timer = -1;
      }
    }

    /** A byte with nothing in flight starts a request: its headers have their own deadline. */
    void bytesArrived() {
      if (inFlight == 0 && !headersArriving) {
        headersArriving = true;
        arm(headersMillis);
      }
    }

    void started() {
      inFlight++;
      headersArriving = false;
      disarm();
    }

    void finished() {
      if (--inFlight == 0) {
        arm(idleMillis);
      }
    }
  }
}
