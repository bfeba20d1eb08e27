package org.standalonecinder.provisioner.controller;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Router;
import java.util.function.BooleanSupplier;

/**
 * {@code /healthz} (the process serves) and {@code /readyz} (the controller's caches are synced),
 * for the kubelet's probes. The checks only read flags, so they are safe on the event loop.
 */
public final class HealthServer {

  private final Vertx vertx;
  private final BooleanSupplier ready;
  private HttpServer server;

  public HealthServer(Vertx vertx, BooleanSupplier ready) {
    this.vertx = vertx;
    this.ready = ready;
  }

  /** Listens; port 0 picks a free one. */
  public Future<HttpServer> listen(String host, int port) {
    Router router = Router.router(vertx);
    router.get("/healthz").handler(ctx -> ctx.response().end("ok\n"));
    router
        .get("/readyz")
        .handler(
            ctx -> {
              if (ready.getAsBoolean()) {
                ctx.response().end("ok\n");
              } else {
                ctx.response().setStatusCode(503).end("caches not synced\n");
              }
            });
    return vertx
        .createHttpServer()
        .requestHandler(router)
        .listen(port, host)
        .onSuccess(s -> server = s);
  }

  public int port() {
    return server.actualPort();
  }

  public Future<Void> close() {
    return server == null ? Future.succeededFuture() : server.close();
  }
}
