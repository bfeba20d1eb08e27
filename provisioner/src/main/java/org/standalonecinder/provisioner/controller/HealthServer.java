package org.standalonecinder.provisioner.controller;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Router;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * {@code /healthz} (the process serves, and every worker of every loop is alive: 503 saying how
 * many are when not, so that the kubelet restarts a provisioner that can no longer provision) and
 * {@code /readyz} (the controller's caches are synced), for the kubelet's probes, and {@code
 * /metrics} (Prometheus) when given. The checks only read flags, so they are safe on the event
 * loop.
 */
public final class HealthServer {

  private final Vertx vertx;
  private final BooleanSupplier ready;
  private final Supplier<String> metrics;
  private volatile BooleanSupplier live = () -> true;
  private volatile Supplier<String> liveness = () -> "";
  private HttpServer server;

  public HealthServer(Vertx vertx, BooleanSupplier ready) {
    this(vertx, ready, null);
  }

  /**
   * @param metrics the Prometheus text for {@code /metrics}, or null for none
   */
  public HealthServer(Vertx vertx, BooleanSupplier ready, Supplier<String> metrics) {
    this.vertx = vertx;
    this.ready = ready;
    this.metrics = metrics;
  }

  /**
   * What {@code /healthz} checks beyond the process serving.
   *
   * @param healthy whether the process can still do its work
   * @param detail what the answer says either way (e.g. the workers alive)
   */
  public HealthServer liveness(BooleanSupplier healthy, Supplier<String> detail) {
    this.live = healthy;
    this.liveness = detail;
    return this;
  }

  /** Listens; port 0 picks a free one. */
  public Future<HttpServer> listen(String host, int port) {
    Router router = Router.router(vertx);
    router
        .get("/healthz")
        .handler(
            ctx -> {
              String detail = liveness.get();
              String tail = detail.isEmpty() ? "" : ": " + detail;
              if (live.getAsBoolean()) {
                ctx.response().end("ok" + tail + "\n");
              } else {
                ctx.response().setStatusCode(503).end("unhealthy" + tail + "\n");
              }
            });
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
    if (metrics != null) {
      router
          .get("/metrics")
          .handler(
              ctx ->
                  vertx
                      .executeBlocking(metrics::get, false)
                      .onSuccess(
                          t ->
                              ctx.response()
                                  .putHeader("Content-Type", "text/plain; version=0.0.4")
                                  .end(t))
                      .onFailure(ctx::fail));
    }
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
