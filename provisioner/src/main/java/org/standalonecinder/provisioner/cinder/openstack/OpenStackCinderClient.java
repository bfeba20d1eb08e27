package org.standalonecinder.provisioner.cinder.openstack;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;
import okhttp3.ConnectionPool;
import okhttp3.OkHttpClient;
import org.openstack4j.api.exceptions.ConnectionException;
import org.openstack4j.api.types.Facing;
import org.openstack4j.api.types.ServiceType;
import org.openstack4j.core.transport.Config;
import org.openstack4j.core.transport.HttpMethod;
import org.openstack4j.core.transport.HttpRequest;
import org.openstack4j.core.transport.HttpResponse;
import org.openstack4j.core.transport.internal.HttpExecutor;
import org.openstack4j.model.identity.URLResolverParams;
import org.openstack4j.openstack.OSFactory;
import org.openstack4j.openstack.identity.v3.domain.KeystoneToken;
import org.openstack4j.openstack.internal.BaseOpenStackService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import org.standalonecinder.provisioner.cinder.ApiVersions;
import org.standalonecinder.provisioner.cinder.Attachment;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.Capacity;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.ConnectionInfo;
import org.standalonecinder.provisioner.cinder.Connector;
import org.standalonecinder.provisioner.cinder.Microversion;
import org.standalonecinder.provisioner.cinder.Pool;
import org.standalonecinder.provisioner.cinder.Snapshot;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.cinder.VolumeSpec;
import org.standalonecinder.provisioner.config.CloudConfig;

/**
 * The {@link CinderClient} on openstack4j: the only class family that imports the SDK.
 *
 * <p>openstack4j provides the session (token header, endpoint resolution through a resolver of
 * ours), request building and the transport SPI (served by {@link OkHttpTransport}), and Keystone
 * v2.0. What it lacks is closed here: the volume actions and the attachments API are raw calls
 * through its service base class, the microversion header is set on each session, status codes are
 * mapped to typed errors with Cinder's request id (its own handling turns a 404 into null and drops
 * the id), and 401 is answered with one fresh authentication.
 *
 * <p>openstack4j keeps its session in a thread-local. Every call therefore runs on this client's
 * own bounded pool, which opens a session from the shared token on that thread; no caller thread
 * ever holds one. Each call waits at most the configured request timeout.
 */
public final class OpenStackCinderClient implements CinderClient {

  /** A bound on listing pages (1000 volumes each): a server that links forever cannot hang us. */
  private static final int MAX_PAGES = 1000;

  private static final Logger LOG = LoggerFactory.getLogger(OpenStackCinderClient.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final AtomicInteger POOLS = new AtomicInteger();

  /** GETs and DELETEs are repeated this often on a 5xx or a lost connection. */
  static final int IDEMPOTENT_ATTEMPTS = 3;

  private final CloudConfig cfg;
  private final Config transport;
  private final OkHttpClient http;
  private final TokenCache tokens;
  private final ThreadPoolExecutor workers;
  private final Duration callTimeout;
  private volatile ApiVersions versions;

  private OpenStackCinderClient(CloudConfig cfg, OkHttpClient http, Clock clock) {
    this.cfg = cfg;
    this.http = http;
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

  /** A client for the configured cloud. Nothing is sent until the first call. */
  public static OpenStackCinderClient create(CloudConfig cfg) {
    return new OpenStackCinderClient(cfg, httpClient(cfg), Clock.systemUTC());
  }

  static OpenStackCinderClient create(CloudConfig cfg, Clock clock) {
    return new OpenStackCinderClient(cfg, httpClient(cfg), clock);
  }

  private static OkHttpClient httpClient(CloudConfig cfg) {
    OkHttpClient.Builder b =
        new OkHttpClient.Builder()
            .connectTimeout(cfg.requestTimeout())
            .readTimeout(cfg.requestTimeout())
            .writeTimeout(cfg.requestTimeout())
            .callTimeout(cfg.requestTimeout())
            .retryOnConnectionFailure(false)
            .connectionPool(new ConnectionPool(cfg.maxConcurrentRequests(), 30, TimeUnit.SECONDS));
    if (cfg.caFile() != null) {
      trust(b, trustManager(cfg));
    } else if (cfg.tlsInsecure()) {
      trust(b, InsecureTrust.TRUST_ALL).hostnameVerifier((host, session) -> true);
    }
    return b.build();
  }

  private static OkHttpClient.Builder trust(OkHttpClient.Builder b, X509TrustManager tm) {
    try {
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(null, new TrustManager[] {tm}, null);
      return b.sslSocketFactory(ctx.getSocketFactory(), tm);
    } catch (GeneralSecurityException e) {
      throw new CinderException.Misconfigured("cannot set up TLS: " + e.getMessage(), e);
    }
  }

  /** Trusts exactly the CAs of the configured PEM file, not the JVM's defaults. */
  private static X509TrustManager trustManager(CloudConfig cfg) {
    try (InputStream in = Files.newInputStream(cfg.caFile())) {
      KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
      ks.load(null, null);
      int i = 0;
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        ks.setCertificateEntry("ca-" + i++, c);
      }
      if (i == 0) {
        throw new CinderException.Misconfigured(
            "[Global] ca-file " + cfg.caFile() + " holds no PEM certificate", null);
      }
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(ks);
      for (TrustManager tm : tmf.getTrustManagers()) {
        if (tm instanceof X509TrustManager x) {
          return x;
        }
      }
      throw new CinderException.Misconfigured("no X.509 trust manager available", null);
    } catch (IOException | GeneralSecurityException e) {
      throw new CinderException.Misconfigured(
          "[Global] ca-file " + cfg.caFile() + " cannot be read as PEM: " + e.getMessage(), e);
    }
  }

  // ------------------------------------------------------------------ the calls

  /**
   * Authenticates (if needed) and returns the block-storage endpoint in use: what the catalog or
   * the noauth configuration gave. For diagnostics.
   */
  public java.net.URI endpoint() {
    return submit("authenticate", () -> tokens.current().cinderEndpoint());
  }

  @Override
  public ApiVersions apiVersions() {
    ApiVersions v = versions;
    if (v == null) {
      v = submit("discover API versions", this::discoverVersions);
      versions = v;
    }
    return v;
  }

  @Override
  public Volume createVolume(VolumeSpec spec) {
    ObjectNode body = JSON.createObjectNode();
    ObjectNode vol = body.putObject("volume");
    vol.put("name", spec.name());
    vol.put("size", spec.sizeGib());
    putIfSet(vol, "volume_type", spec.volumeType());
    if (!cfg.ignoreVolumeAz()) {
      putIfSet(vol, "availability_zone", spec.availabilityZone());
    }
    putIfSet(vol, "description", spec.description());
    putIfSet(vol, "source_volid", spec.sourceVolumeId());
    putIfSet(vol, "snapshot_id", spec.snapshotId());
    if (!spec.metadata().isEmpty()) {
      ObjectNode md = vol.putObject("metadata");
      spec.metadata().forEach(md::put);
    }
    JsonNode res = call("create volume " + spec.name(), HttpMethod.POST, "/volumes", body, null);
    return volume(required(res, "volume", "create volume " + spec.name()));
  }

  @Override
  public Optional<Volume> getVolume(String volumeId) {
    try {
      JsonNode res = call("get volume " + volumeId, HttpMethod.GET, "/volumes/" + id(volumeId));
      return Optional.of(volume(required(res, "volume", "get volume " + volumeId)));
    } catch (CinderException.NotFound e) {
      return Optional.empty();
    }
  }

  @Override
  public List<Volume> findVolumes(String name, Map<String, String> metadata) {
    Map<String, Object> q = new LinkedHashMap<>();
    if (name != null) {
      q.put("name", name);
    }
    if (metadata != null && !metadata.isEmpty()) {
      try {
        q.put("metadata", JSON.writeValueAsString(metadata));
      } catch (IOException e) {
        throw new IllegalArgumentException(e);
      }
    }
    List<Volume> out = new ArrayList<>();
    // Cinder answers at most osapi_max_limit (1000) volumes a page and links the next one.
    for (int page = 1; ; page++) {
      JsonNode res = call("list volumes", HttpMethod.GET, "/volumes/detail", null, q);
      JsonNode volumes = required(res, "volumes", "list volumes");
      for (JsonNode v : volumes) {
        out.add(volume(v));
      }
      boolean more = false;
      for (JsonNode link : res.path("volumes_links")) {
        more |= "next".equals(link.path("rel").asText());
      }
      if (!more || volumes.isEmpty() || page >= MAX_PAGES) {
        return out;
      }
      q.put("marker", out.get(out.size() - 1).id());
    }
  }

  @Override
  public Volume awaitVolumeStatus(String volumeId, Set<String> wanted, Backoff backoff) {
    long deadline = System.nanoTime() + backoff.deadline().toNanos();
    String last = null;
    for (int attempt = 0; ; attempt++) {
      Volume v =
          getVolume(volumeId)
              .orElseThrow(
                  () ->
                      new CinderException.NotFound(
                          "volume " + volumeId + " disappeared while waiting for " + wanted, null));
      last = v.status();
      if (wanted.contains(last)) {
        return v;
      }
      if (last.startsWith("error")) {
        throw new CinderException.UnexpectedState(
            "volume " + volumeId + " went to status " + last + " while waiting for " + wanted,
            last,
            false);
      }
      sleepOrGiveUp(backoff, attempt, deadline, "volume " + volumeId, wanted.toString(), last);
    }
  }

  @Override
  public void awaitVolumeDeleted(String volumeId, Backoff backoff) {
    long deadline = System.nanoTime() + backoff.deadline().toNanos();
    for (int attempt = 0; ; attempt++) {
      Optional<Volume> v = getVolume(volumeId);
      if (v.isEmpty()) {
        return;
      }
      String status = v.get().status();
      if (status.equals("error_deleting")) {
        throw new CinderException.UnexpectedState(
            "volume " + volumeId + " failed to delete (status error_deleting)", status, false);
      }
      sleepOrGiveUp(backoff, attempt, deadline, "volume " + volumeId, "deleted", status);
    }
  }

  @Override
  public void updateVolumeMetadata(String volumeId, Map<String, String> metadata) {
    ObjectNode body = JSON.createObjectNode();
    ObjectNode md = body.putObject("metadata");
    metadata.forEach(md::put);
    // POST merges; PUT would replace every entry, including ones an admin added.
    call(
        "update metadata of volume " + volumeId,
        HttpMethod.POST,
        "/volumes/" + id(volumeId) + "/metadata",
        body,
        null);
  }

  @Override
  public void deleteVolume(String volumeId) {
    try {
      call("delete volume " + volumeId, HttpMethod.DELETE, "/volumes/" + id(volumeId));
    } catch (CinderException.NotFound e) {
      // already gone: what the caller wanted
    }
  }

  @Override
  public void extendVolume(String volumeId, int newSizeGib) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("os-extend").put("new_size", newSizeGib);
    action(volumeId, "extend volume " + volumeId + " to " + newSizeGib + " GiB", body);
  }

  @Override
  public void reserve(String volumeId) {
    action(volumeId, "reserve volume " + volumeId, nullAction("os-reserve"));
  }

  @Override
  public void unreserve(String volumeId) {
    action(volumeId, "unreserve volume " + volumeId, nullAction("os-unreserve"));
  }

  @Override
  public void resetToAvailable(String volumeId) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("os-reset_status").put("status", "available").put("attach_status", "detached");
    action(volumeId, "reset the status of volume " + volumeId + " to available", body);
  }

  @Override
  public ConnectionInfo initializeConnection(String volumeId, Connector connector) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("os-initialize_connection")
        .set("connector", JSON.valueToTree(connector.toApi()));
    JsonNode res = action(volumeId, "initialize connection of volume " + volumeId, body);
    return connectionInfo(
        required(res, "connection_info", "initialize connection of volume " + volumeId));
  }

  @Override
  public void terminateConnection(String volumeId, Connector connector) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("os-terminate_connection").set("connector", JSON.valueToTree(connector.toApi()));
    action(volumeId, "terminate connection of volume " + volumeId, body);
  }

  @Override
  public Attachment createAttachment(String volumeId, Connector connector) {
    requireVersion(Microversion.ATTACHMENTS, "the attachments API");
    ObjectNode body = JSON.createObjectNode();
    ObjectNode a = body.putObject("attachment");
    a.put("volume_uuid", volumeId);
    // No instance_uuid: with one, Cinder would ask Nova about the instance.
    a.set("connector", JSON.valueToTree(connector.toApi()));
    JsonNode res = call("attach volume " + volumeId, HttpMethod.POST, "/attachments", body, null);
    return attachment(required(res, "attachment", "attach volume " + volumeId));
  }

  @Override
  public List<Attachment> listAttachments(String volumeId) {
    if (!apiVersions().used().atLeast(Microversion.ATTACHMENTS)) {
      return List.of();
    }
    JsonNode res =
        call(
            "list attachments of volume " + volumeId,
            HttpMethod.GET,
            "/attachments",
            null,
            Map.of("volume_id", id(volumeId)));
    List<Attachment> out = new ArrayList<>();
    for (JsonNode a : required(res, "attachments", "list attachments of volume " + volumeId)) {
      Attachment at = attachment(a);
      // The filter is applied by Cinder; checked again so a cloud that ignores it cannot make
      // us detach another volume.
      if (volumeId.equals(at.volumeId())) {
        out.add(at);
      }
    }
    return out;
  }

  @Override
  public void completeAttachment(String attachmentId) {
    requireVersion(Microversion.ATTACHMENT_COMPLETE, "completing an attachment");
    call(
        "complete attachment " + attachmentId,
        HttpMethod.POST,
        "/attachments/" + id(attachmentId) + "/action",
        nullAction("os-complete"),
        null);
  }

  @Override
  public void deleteAttachment(String attachmentId) {
    requireVersion(Microversion.ATTACHMENTS, "the attachments API");
    try {
      call(
          "delete attachment " + attachmentId,
          HttpMethod.DELETE,
          "/attachments/" + id(attachmentId));
    } catch (CinderException.NotFound e) {
      // already gone
    }
  }

  @Override
  public Snapshot createSnapshot(String volumeId, String name, Map<String, String> metadata) {
    ObjectNode body = JSON.createObjectNode();
    ObjectNode s = body.putObject("snapshot");
    s.put("volume_id", volumeId);
    s.put("name", name);
    if (metadata != null && !metadata.isEmpty()) {
      ObjectNode md = s.putObject("metadata");
      metadata.forEach(md::put);
    }
    JsonNode res = call("snapshot volume " + volumeId, HttpMethod.POST, "/snapshots", body, null);
    return snapshot(required(res, "snapshot", "snapshot volume " + volumeId));
  }

  @Override
  public Optional<Snapshot> getSnapshot(String snapshotId) {
    try {
      JsonNode res =
          call("get snapshot " + snapshotId, HttpMethod.GET, "/snapshots/" + id(snapshotId));
      return Optional.of(snapshot(required(res, "snapshot", "get snapshot " + snapshotId)));
    } catch (CinderException.NotFound e) {
      return Optional.empty();
    }
  }

  @Override
  public Snapshot awaitSnapshotAvailable(String snapshotId, Backoff backoff) {
    long deadline = System.nanoTime() + backoff.deadline().toNanos();
    for (int attempt = 0; ; attempt++) {
      Snapshot s =
          getSnapshot(snapshotId)
              .orElseThrow(
                  () ->
                      new CinderException.NotFound(
                          "snapshot " + snapshotId + " disappeared", null));
      if (s.status().equals("available")) {
        return s;
      }
      if (s.status().startsWith("error")) {
        throw new CinderException.UnexpectedState(
            "snapshot " + snapshotId + " went to status " + s.status(), s.status(), false);
      }
      sleepOrGiveUp(backoff, attempt, deadline, "snapshot " + snapshotId, "available", s.status());
    }
  }

  @Override
  public void deleteSnapshot(String snapshotId) {
    try {
      call("delete snapshot " + snapshotId, HttpMethod.DELETE, "/snapshots/" + id(snapshotId));
    } catch (CinderException.NotFound e) {
      // already gone
    }
  }

  @Override
  public List<Pool> pools() {
    JsonNode res =
        call(
            "list pools",
            HttpMethod.GET,
            "/scheduler-stats/get_pools",
            null,
            Map.of("detail", "true"));
    List<Pool> out = new ArrayList<>();
    for (JsonNode p : required(res, "pools", "list pools")) {
      JsonNode c = p.path("capabilities");
      out.add(
          new Pool(
              p.path("name").asText(),
              text(c, "volume_backend_name"),
              text(c, "storage_protocol"),
              Capacity.parse(raw(c.get("total_capacity_gb"))),
              Capacity.parse(raw(c.get("free_capacity_gb"))),
              Capacity.parse(raw(c.get("allocated_capacity_gb"))),
              Capacity.parse(raw(c.get("provisioned_capacity_gb"))),
              ratio(raw(c.get("max_over_subscription_ratio")))));
    }
    return out;
  }

  /** Cinder sends the ratio as a number or a string ("20.0", or "auto" for thin drivers). */
  private static Double ratio(Object raw) {
    if (raw instanceof Number n) {
      return n.doubleValue();
    }
    try {
      return raw == null ? null : Double.valueOf(raw.toString().trim());
    } catch (NumberFormatException e) {
      return null;
    }
  }

  @Override
  public void close() {
    workers.shutdownNow();
    OkHttpTransport.unregister(transport);
    http.connectionPool().evictAll();
    http.dispatcher().executorService().shutdown();
  }

  // ------------------------------------------------------------------ plumbing

  private JsonNode action(String volumeId, String what, ObjectNode body) {
    return call(what, HttpMethod.POST, "/volumes/" + id(volumeId) + "/action", body, null);
  }

  private JsonNode call(String what, HttpMethod method, String path) {
    return call(what, method, path, null, null);
  }

  /** One API call on a worker: version header, one re-authentication on 401, typed errors. */
  private JsonNode call(
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
              Thread.sleep(200L << (attempt - 1));
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
  public static final String MDC_REQUEST_ID = "cinderRequest";

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

  private ApiVersions discoverVersions() {
    AuthToken token = tokens.current();
    String root = apiRoot(token.cinderEndpoint().toString());
    HttpRequest<Void> req =
        HttpRequest.builder(Void.class)
            .endpoint(root)
            .path("/")
            .method(HttpMethod.GET)
            .header("Accept", "application/json")
            .config(transport)
            .build();
    HttpResponse res;
    try {
      res = HttpExecutor.create().execute(req);
    } catch (ConnectionException e) {
      throw Errors.fromTransport("GET " + root, e.getCause() == null ? e : e.getCause());
    }
    String text = ((OkHttpTransport.BufferedResponse) res).bodyText();
    // The version document answers 300 Multiple Choices.
    if (res.getStatus() != 300 && res.getStatus() / 100 != 2) {
      throw Errors.fromStatus("GET " + root, res.getStatus(), text, Errors.requestId(res));
    }
    try {
      for (JsonNode ver : JSON.readTree(text).path("versions")) {
        if (ver.path("id").asText().startsWith("v3")) {
          Microversion min = Microversion.parse(ver.path("min_version").asText("3.0"));
          Microversion max = Microversion.parse(ver.path("version").asText("3.0"));
          Microversion used =
              max.compareTo(cfg.maxMicroversion()) > 0 ? cfg.maxMicroversion() : max;
          return new ApiVersions(min, max, used);
        }
      }
    } catch (IOException | IllegalArgumentException e) {
      throw new CinderException.Unavailable(
          "GET " + root + ": unreadable version document", res.getStatus(), null, e);
    }
    throw new CinderException.Unsupported(
        "GET " + root + " lists no v3 API: this Cinder is too old (v3 exists since Mitaka)",
        res.getStatus(),
        Errors.requestId(res));
  }

  /** {@code http://h:8776/v3/abc} becomes {@code http://h:8776}; a path prefix is kept. */
  static String apiRoot(String endpoint) {
    int i = endpoint.indexOf("/v3");
    String root = i < 0 ? endpoint : endpoint.substring(0, i);
    return root.replaceAll("/+$", "");
  }

  private void requireVersion(Microversion needed, String feature) {
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

  private static void sleepOrGiveUp(
      Backoff backoff, int attempt, long deadlineNanos, String what, String wanted, String last) {
    long left = deadlineNanos - System.nanoTime();
    if (left <= 0) {
      throw new CinderException.UnexpectedState(
          what
              + " did not become "
              + wanted
              + " within "
              + backoff.deadline().toSeconds()
              + "s (last status "
              + last
              + ")",
          last,
          true);
    }
    long sleep = Math.min(backoff.delay(attempt).toNanos(), left);
    try {
      TimeUnit.NANOSECONDS.sleep(sleep);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CinderException.Unavailable(what + ": interrupted while waiting", 0, null, e);
    }
  }

  // ------------------------------------------------------------------ mapping

  private static Volume volume(JsonNode v) {
    Map<String, String> md = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = v.path("metadata").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      md.put(e.getKey(), e.getValue().asText());
    }
    List<String> attachments = new ArrayList<>();
    for (JsonNode a : v.path("attachments")) {
      String id = text(a, "attachment_id");
      attachments.add(id != null ? id : text(a, "id"));
    }
    return new Volume(
        text(v, "id"),
        text(v, "name"),
        text(v, "status"),
        v.path("size").asInt(),
        text(v, "availability_zone"),
        text(v, "volume_type"),
        md,
        text(v, "source_volid"),
        text(v, "snapshot_id"),
        v.path("multiattach").asBoolean(false),
        attachments);
  }

  private static Snapshot snapshot(JsonNode s) {
    return new Snapshot(
        text(s, "id"),
        text(s, "name"),
        text(s, "volume_id"),
        text(s, "status"),
        s.path("size").asInt());
  }

  private static Attachment attachment(JsonNode a) {
    JsonNode ci = a.get("connection_info");
    ConnectionInfo info = null;
    if (ci != null && ci.isObject() && ci.size() > 0) {
      info = connectionInfo(ci);
    }
    return new Attachment(text(a, "id"), text(a, "volume_id"), text(a, "status"), info);
  }

  @SuppressWarnings("unchecked")
  private static ConnectionInfo connectionInfo(JsonNode ci) {
    // The attachments API flattens the data next to driver_volume_type; the old action nests it.
    JsonNode data = ci.has("data") ? ci.get("data") : ci;
    Map<String, Object> map = JSON.convertValue(data, Map.class);
    map.remove("driver_volume_type");
    return new ConnectionInfo(text(ci, "driver_volume_type"), map);
  }

  private static JsonNode required(JsonNode res, String field, String what) {
    JsonNode n = res.get(field);
    if (n == null || n.isNull()) {
      throw new CinderException.Unavailable(
          what + ": the answer has no '" + field + "' (an empty 204 means a missing token)",
          0,
          null,
          null);
    }
    return n;
  }

  private static String text(JsonNode n, String field) {
    JsonNode v = n.get(field);
    return v == null || v.isNull() ? null : v.asText();
  }

  private static Object raw(JsonNode n) {
    if (n == null || n.isNull()) {
      return null;
    }
    return n.isNumber() ? n.numberValue() : n.asText();
  }

  private static void putIfSet(ObjectNode o, String field, String value) {
    if (value != null) {
      o.put(field, value);
    }
  }

  private static ObjectNode nullAction(String name) {
    ObjectNode o = JSON.createObjectNode();
    o.putNull(name);
    return o;
  }

  /** Ids go into URL paths: refuse anything that could change the path. */
  private static String id(String id) {
    if (id == null || !id.matches("[A-Za-z0-9-]+")) {
      throw new CinderException.BadRequest("not a Cinder id: '" + id + "'", 0, null);
    }
    return id;
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
