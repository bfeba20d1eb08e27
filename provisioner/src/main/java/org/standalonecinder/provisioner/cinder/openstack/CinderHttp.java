package org.standalonecinder.provisioner.cinder.openstack;

import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.JSON;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.id;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import okhttp3.OkHttpClient;
import org.openstack4j.api.exceptions.ConnectionException;
import org.openstack4j.api.types.Facing;
import org.openstack4j.api.types.ServiceType;
import org.openstack4j.core.transport.Config;
import org.openstack4j.core.transport.HttpMethod;
import org.openstack4j.core.transport.HttpResponse;
import org.openstack4j.model.identity.URLResolverParams;
import org.openstack4j.openstack.OSFactory;
import org.openstack4j.openstack.identity.v3.domain.KeystoneToken;
import org.openstack4j.openstack.internal.BaseOpenStackService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import org.standalonecinder.provisioner.cinder.ApiVersions;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.Microversion;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig;

/**
 * The plumbing under every Cinder call: the HTTP client ({@link HttpClients}), the token, the
 * microversion, the call workers and their deadlines, retries of idempotent calls, and the mapping
 * of answers to typed errors.
 *
 * <p>openstack4j provides the session (token header, endpoint resolution through a resolver of
 * ours), request building and the transport SPI (served by {@link OkHttpTransport}), and Keystone
 * v2.0. openstack4j keeps its session in a thread-local: every call therefore runs on this class's
 * own bounded pool, which opens a session from the shared token on that thread; no caller thread
 * ever holds one. Each call waits at most the configured request timeout.
 */
final class CinderHttp {

  private static final Logger LOG = LoggerFactory.getLogger(CinderHttp.class);
  private static final AtomicInteger POOLS = new AtomicInteger();

  /** GETs and DELETEs are repeated this often on a 5xx or a lost connection. */
  static final int IDEMPOTENT_ATTEMPTS = 3;

  /**
   * The pause before each repeat: 200 ms, then 400 ms. Short, since the whole call shares one
   * deadline; a longer outage is the caller's retry policy's (the claim loop's backoff).
   */
  static final org.standalonecinder.provisioner.cinder.Backoff IDEMPOTENT_BACKOFF =
      new org.standalonecinder.provisioner.cinder.Backoff(
          Duration.ofMillis(200), 2.0, Duration.ofMillis(400), Duration.ofSeconds(1));

  private final CloudConfig cfg;
  private final Config transport;
  private final OkHttpClient http;
  private final TokenCache tokens;
  private final ThreadPoolExecutor workers;
  private final Duration callTimeout;
  private volatile ApiVersions versions;

  CinderHttp(CloudConfig cfg, Clock clock) {
    this.cfg = cfg;
    this.http = HttpClients.forCloud(cfg);
    this.callTimeout = cfg.requestTimeout();
    this.transport =
        Config.newConfig()
            .withEndpointURLResolver(new TokenEndpointResolver())
            .withConnectionTimeout((int) cfg.requestTimeout().toMillis())
            .withReadTimeout((int) cfg.requestTimeout().toMillis());
    OkHttpTransport.register(transport, http);
    Authenticator auth =
        cfg.auth() == CloudConfig.AuthMethod.NOAUTH
            ? new NoAuthAuthenticator(cfg)
            : new KeystoneAuthenticator(cfg, transport);
    this.tokens = new TokenCache(auth, clock);
    int n = cfg.maxConcurrentRequests();
    int poolId = POOLS.incrementAndGet();
    AtomicInteger threadId = new AtomicInteger();
    this.workers =
        new ThreadPoolExecutor(
            n,
            n,
            60,
            TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(n * 64),
            r -> {
              Thread t = new Thread(r, "cinder-" + poolId + "-" + threadId.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    workers.allowCoreThreadTimeOut(true);
  }

  CloudConfig config() {
    return cfg;
  }

  /**
   * Authenticates (if needed) and returns the block-storage endpoint in use: what the catalog or
   * the noauth configuration gave. For diagnostics.
   */
  java.net.URI endpoint() {
    return submit("authenticate", () -> tokens.current().cinderEndpoint());
  }

  ApiVersions apiVersions() {
    ApiVersions v = versions;
    if (v == null) {
      v =
          submit(
              "discover API versions",
              () ->
                  VersionDocument.read(
                      tokens.current().cinderEndpoint().toString(),
                      transport,
                      cfg.maxMicroversion()));
      versions = v;
    }
    return v;
  }

  void close() {
    workers.shutdownNow();
    OkHttpTransport.unregister(transport);
    http.connectionPool().evictAll();
    http.dispatcher().executorService().shutdown();
  }

  JsonNode action(String volumeId, String what, ObjectNode body) {
    return call(what, HttpMethod.POST, "/volumes/" + id(volumeId) + "/action", body, null);
  }

  JsonNode call(String what, HttpMethod method, String path) {
    return call(what, method, path, null, null);
  }

  /** One API call on a worker: version header, one re-authentication on 401, typed errors. */
  JsonNode call(
      String what, HttpMethod method, String path, JsonNode body, Map<String, Object> query) {
    ApiVersions v = apiVersions();
    return submit(
        what,
        () -> {
          boolean idempotent = method == HttpMethod.GET || method == HttpMethod.DELETE;
          int attempts = idempotent ? IDEMPOTENT_ATTEMPTS : 1;
          for (int attempt = 1; ; attempt++) {
            try {
              return authenticated(what, method, path, body, query, v);
            } catch (CinderException.Unavailable e) {
              if (attempt >= attempts || Thread.currentThread().isInterrupted()) {
                throw e;
              }
              LOG.debug("{}: {}; attempt {} of {}", what, e.getMessage(), attempt, attempts);
              Thread.sleep(IDEMPOTENT_BACKOFF.delay(attempt - 1).toMillis());
            }
          }
        });
  }

  private JsonNode authenticated(
      String what,
      HttpMethod method,
      String path,
      JsonNode body,
      Map<String, Object> query,
      ApiVersions v) {
    AuthToken token = tokens.current();
    try {
      return send(token, what, method, path, body, query, v);
    } catch (CinderException.Unauthorized e) {
      if (cfg.auth() == CloudConfig.AuthMethod.NOAUTH) {
        throw e;
      }
      // The token may have been revoked or expired early: one fresh token, one more try.
      tokens.invalidate(token);
      return send(tokens.current(), what, method, path, body, query, v);
    }
  }

  /** The log context key of the last Cinder request id of the calling thread. */
  static final String MDC_REQUEST_ID = "cinderRequest";

  /** On a call worker: the request id of the answer it read last. */
  private static final ThreadLocal<String> LAST_REQUEST_ID = new ThreadLocal<>();

  private JsonNode send(
      AuthToken token,
      String what,
      HttpMethod method,
      String path,
      JsonNode body,
      Map<String, Object> query,
      ApiVersions v) {
    KeystoneToken t = new KeystoneToken();
    t.setId(token.id().reveal());
    t.setEndpoint(token.cinderEndpoint().toString());
    OSFactory.clientFromToken(t, Facing.PUBLIC, transport)
        .headers(Map.of("OpenStack-API-Version", "volume " + v.used()));
    HttpResponse res;
    try {
      res = new Api().send(method, path, body == null ? null : body.toString(), query);
    } catch (ConnectionException e) {
      // Cinder may have restarted: every idle pooled connection is then dead, and with
      // retryOnConnectionFailure off (a POST must not be sent twice) each retry would take the
      // next dead one. Dropping the idle ones makes the next call connect anew.
      http.connectionPool().evictAll();
      throw Errors.fromTransport(what, e.getCause() == null ? e : e.getCause());
    }
    return parse(what, res);
  }

  private static JsonNode parse(String what, HttpResponse res) {
    String text = ((OkHttpTransport.BufferedResponse) res).bodyText();
    int status = res.getStatus();
    LAST_REQUEST_ID.set(Errors.requestId(res));
    if (status / 100 != 2) {
      throw Errors.fromStatus(what, status, text, Errors.requestId(res));
    }
    if (text.isBlank()) {
      return JSON.nullNode();
    }
    try {
      return JSON.readTree(text);
    } catch (IOException e) {
      throw new CinderException.Unavailable(
          what + ": the answer is not JSON (" + e.getMessage() + ")",
          status,
          Errors.requestId(res),
          e);
    }
  }

  void requireVersion(Microversion needed, String feature) {
    ApiVersions v = apiVersions();
    if (!v.used().atLeast(needed)) {
      throw new CinderException.Unsupported(
          feature
              + " needs microversion "
              + needed
              + " but this client uses "
              + v.used()
              + " (server max "
              + v.max()
              + ")",
          0,
          null);
    }
  }

  /**
   * Runs a call on a worker with the call deadline. The caller's log lines after it name the Cinder
   * request they follow ({@link #MDC_REQUEST_ID}; the controller clears the MDC after each item),
   * whether the call succeeded or failed.
   */
  private <T> T submit(String what, Callable<T> work) {
    try {
      return submitOnWorker(what, work);
    } catch (CinderException e) {
      e.requestId().ifPresent(id -> MDC.put(MDC_REQUEST_ID, id));
      throw e;
    }
  }

  private record Answered<T>(T value, String requestId) {}

  private <T> T submitOnWorker(String what, Callable<T> work) {
    Callable<Answered<T>> traced =
        () -> {
          LAST_REQUEST_ID.remove();
          try {
            return new Answered<>(work.call(), LAST_REQUEST_ID.get());
          } finally {
            LAST_REQUEST_ID.remove();
          }
        };
    if (Thread.currentThread().isInterrupted()) {
      // A step cut short (its replica stops, or lost the Lease) asks Cinder nothing more: not
      // even its undo, which could delete what the next leader already took over.
      throw new CinderException.Unavailable(what + ": interrupted, not sent", 0, null, null);
    }
    Future<Answered<T>> f;
    try {
      f = workers.submit(traced);
    } catch (RejectedExecutionException e) {
      throw new CinderException.Unavailable(
          what + ": too many Cinder calls queued (client closed or overloaded)", 0, null, e);
    }
    try {
      // Idempotent calls may retry; leave them room for it.
      Answered<T> a =
          f.get(callTimeout.toMillis() * (IDEMPOTENT_ATTEMPTS + 1), TimeUnit.MILLISECONDS);
      if (a.requestId() != null) {
        MDC.put(MDC_REQUEST_ID, a.requestId());
      }
      return a.value();
    } catch (TimeoutException e) {
      f.cancel(true);
      throw new CinderException.Unavailable(
          what + ": no answer from Cinder within " + callTimeout.toSeconds() + " s", 0, null, e);
    } catch (InterruptedException e) {
      f.cancel(true);
      Thread.currentThread().interrupt();
      throw new CinderException.Unavailable(what + ": interrupted", 0, null, e);
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      if (c instanceof CinderException ce) {
        throw ce;
      }
      if (c instanceof InterruptedException) {
        throw new CinderException.Unavailable(what + ": interrupted", 0, null, c);
      }
      throw new CinderException.Unavailable(what + ": " + c, 0, null, c);
    }
  }

  /** Requests through openstack4j's service base class, on the current thread's session. */
  private static final class Api extends BaseOpenStackService {
    Api() {
      super(ServiceType.BLOCK_STORAGE);
    }

    HttpResponse send(HttpMethod method, String path, String json, Map<String, Object> query) {
      Invocation<Void> inv = request(method, Void.class, path);
      inv.header("Accept", "application/json");
      if (json != null) {
        inv.json(json);
      }
      if (query != null) {
        inv.params(query);
      }
      return inv.executeWithResponse();
    }
  }

  /** The endpoint is whatever the token carries: found in the catalog by us, or configured. */
  private static final class TokenEndpointResolver
      implements org.openstack4j.api.identity.EndpointURLResolver {
    @Override
    public String findURLV2(URLResolverParams p) {
      return p.access.getEndpoint();
    }

    @Override
    public String findURLV3(URLResolverParams p) {
      return p.token.getEndpoint();
    }
  }
}
