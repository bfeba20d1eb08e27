package org.standalonecinder.webhook.http;

import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.PlatformHandler;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Bounds what reviews in flight may hold, so that no flood of requests (a pod that reaches the
 * port, a broken client) can exhaust the heap: every claim and StorageClass write of the cluster
 * may wait on this process, so it must answer "too busy" at once rather than die.
 *
 * <p>A request is admitted before its body is read, on what its headers declare, and holds its
 * declared length (the largest body, {@link WebhookServer#MAX_BODY}, when it declares none) until
 * its answer is sent or its connection ends:
 *
 * <ul>
 *   <li>A declared body over {@link WebhookServer#MAX_BODY}: 413 at once, the body unread.
 *   <li>All requests in flight together hold at most {@link Limits#bytes()}, and those of one
 *       client address at most {@link Limits#perClientBytes()}: a client that floods waits for its
 *       own share while the API server keeps its own. When the total is reached, the address that
 *       holds the most yields its newest requests (reset, or their connection closed) to one that
 *       holds less ({@link FairShare}): a flood from several addresses holding slow bodies cannot
 *       lock out the API server, whose reviews are small and quick.
 *   <li>A large body (over {@link Limits#largeBody()}, or undeclared) parses into tens of MiB: at
 *       most {@link Limits#largeRequests()} at once in all, and one a client. Every review the API
 *       server sends for a claim or a class is far smaller.
 *   <li>Anything over a bound: 429 with {@code Retry-After: 1} at once; its body is dropped as it
 *       arrives (never kept), for at most the request deadline.
 * </ul>
 *
 * A trickling body still has the request deadline of {@link ClientDeadlines}, which frees its share
 * within 30 s.
 */
final class LoadGate implements PlatformHandler {

  /**
   * How long the body of a refused request is read and dropped before its stream or connection
   * ends: the request deadline (a client may take that long to send a body it was told not to).
   */
  private final long drainMillis;

  /**
   * @param bytes declared body bytes in flight at once, in all
   * @param perClientBytes of those, from one client address
   * @param largeBody the largest body that is not large
   * @param largeRequests large (or undeclared) bodies in flight at once, in all (one a client)
   */
  record Limits(long bytes, long perClientBytes, long largeBody, int largeRequests) {
    /**
     * 16 MiB in flight, 6 MiB from one client, two large bodies (over 256 KiB) at once: within the
     * webhook's 64 MiB heap with room for the parsed objects, and far above what an API server
     * sends (a review of a claim is a few KiB, answered in milliseconds: 6 MiB is a thousand of
     * them at once).
     */
    static final Limits DEFAULT = new Limits(16L << 20, 6L << 20, 256L << 10, 2);
  }

  private final Limits limits;
  private final FairShare bytes;
  private final AtomicInteger large = new AtomicInteger();
  // Per client address; an entry leaves with its last request (merge and computeIfPresent are
  // atomic per key, so the sums stay exact across event loops).
  private final Map<String, Long> largeByClient = new ConcurrentHashMap<>();

  private final Shedding shedding;

  LoadGate(Limits limits, java.time.Duration drain, Shedding shedding) {
    this.limits = limits;
    this.shedding = shedding;
    this.drainMillis = drain.toMillis();
    this.bytes = new FairShare(limits.bytes(), limits.perClientBytes());
  }

  /** The bytes {@code client}'s reviews in flight hold now. */
  long heldBy(String client) {
    return bytes.heldBy(client);
  }

  /** How many large reviews are in flight now. */
  int largeInFlight() {
    return large.get();
  }

  @Override
  public void handle(RoutingContext ctx) {
    HttpServerRequest req = ctx.request();
    long declared = declaredLength(req);
    if (declared > WebhookServer.MAX_BODY) {
      shedding.refused(Shedding.Reason.TOO_LARGE, "a body declared over 3 MiB");
      shed(ctx, 413, "the body is larger than " + WebhookServer.MAX_BODY + " bytes");
      return;
    }
    String client = req.remoteAddress() == null ? "" : req.remoteAddress().hostAddress();
    long holds = declared < 0 ? WebhookServer.MAX_BODY : declared;
    boolean isLarge = declared < 0 || declared > limits.largeBody();
    List<Runnable> taken = new ArrayList<>(4);
    String refusal = null;
    Shedding.Reason why = null;
    // The large places first: a request they refuse must not have displaced anyone's.
    if (isLarge
        && (!take(largeByClient, client, 1, 1, taken)
            || !take(large, limits.largeRequests(), taken))) {
      refusal = "too many large reviews in flight; retry";
      why = Shedding.Reason.LARGE;
    } else {
      FairShare.Admission admitted = bytes.admit(client, holds, displace(ctx));
      for (int i = 0; i < admitted.displaced(); i++) {
        shedding.refused(
            Shedding.Reason.DISPLACED, "a review of the client that held the most, for " + client);
      }
      if (admitted.refusal() == FairShare.Refusal.CLIENT) {
        refusal = "too many reviews in flight from " + client + "; retry";
        why = Shedding.Reason.CLIENT_BYTES;
      } else if (admitted.refusal() == FairShare.Refusal.TOTAL) {
        refusal = "too many reviews in flight; retry";
        why = Shedding.Reason.BYTES;
      } else {
        FairShare.Holding holding = admitted.holding();
        taken.add(holding::release);
      }
    }
    if (refusal != null) {
      taken.forEach(Runnable::run);
      shedding.refused(why, refusal);
      shed(ctx, 429, refusal);
      return;
    }
    // Given back once, whichever comes first: the answer, or the client going away.
    AtomicBoolean freed = new AtomicBoolean();
    Runnable free =
        () -> {
          if (freed.compareAndSet(false, true)) {
            taken.forEach(Runnable::run);
          }
        };
    ctx.addEndHandler(v -> free.run());
    Departures.onLeave(ctx, free);
    ctx.next();
  }

  /**
   * What a request does when the client that holds the most must make room: its stream is reset
   * (HTTP/2) or its connection closed (HTTP/1.1), on its own event loop; that frees its share.
   */
  private static Runnable displace(RoutingContext ctx) {
    io.vertx.core.Context context = ctx.vertx().getOrCreateContext();
    HttpServerRequest req = ctx.request();
    return () ->
        context.runOnContext(
            v -> {
              if (ctx.response().ended() || ctx.response().closed()) {
                return; // answered meanwhile: nothing is held any more
              }
              if (req.version() == HttpVersion.HTTP_2) {
                ctx.response().reset();
              } else {
                req.connection().close();
              }
            });
  }

  private static boolean take(
      Map<String, Long> byClient, String client, long n, long cap, List<Runnable> taken) {
    Runnable giveBack = () -> byClient.computeIfPresent(client, (k, v) -> v <= n ? null : v - n);
    if (byClient.merge(client, n, Long::sum) > cap) {
      giveBack.run();
      return false;
    }
    taken.add(giveBack);
    return true;
  }

  private static boolean take(AtomicInteger total, int cap, List<Runnable> taken) {
    if (total.incrementAndGet() > cap) {
      total.decrementAndGet();
      return false;
    }
    taken.add(total::decrementAndGet);
    return true;
  }

  /** The declared Content-Length; -1 when there is none (chunked) or it is not a number. */
  private static long declaredLength(HttpServerRequest req) {
    String v = req.getHeader("Content-Length");
    if (v == null) {
      return -1;
    }
    try {
      return Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /**
   * Answers at once without keeping the body: it is read and dropped (so that a client still
   * sending it, as HTTP clients do before they read an answer, gets to read why), for at most the
   * request deadline. Then an HTTP/1.1 connection is closed; an HTTP/2 stream simply ends and the
   * connection's other streams go on. Dropping costs no memory, only the CPU to decrypt.
   */
  private void shed(RoutingContext ctx, int status, String reason) {
    HttpServerRequest req = ctx.request();
    var response = ctx.response();
    response.setStatusCode(status).putHeader("Content-Type", "text/plain");
    if (status == 429) {
      response.putHeader("Retry-After", "1");
    }
    boolean http2 = req.version() == HttpVersion.HTTP_2;
    var connection = req.connection();
    if (!http2) {
      response.putHeader("Connection", "close");
    }
    long timer =
        ctx.vertx()
            .setTimer(
                drainMillis,
                id -> {
                  if (http2) {
                    response.reset();
                  } else {
                    connection.close();
                  }
                });
    req.handler(dropped -> {});
    req.endHandler(
        v -> {
          ctx.vertx().cancelTimer(timer);
          if (!http2) {
            connection.close();
          }
        });
    req.exceptionHandler(e -> ctx.vertx().cancelTimer(timer));
    req.resume();
    response.end(reason + "\n");
  }
}
