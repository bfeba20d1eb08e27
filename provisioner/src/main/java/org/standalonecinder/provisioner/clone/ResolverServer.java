package org.standalonecinder.provisioner.clone;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.provision.VolumeSource;

/**
 * The clone check the admission webhook asks before it admits a clone: {@code POST /v1/clone-check}
 * with {@code {"source": "ns/name", "claim": <the claim>}} answers whether the source resolves to a
 * Cinder volume that can be cloned into the claim's class, and what it is. Read-only (admission may
 * be a dry run). It listens on loopback only, and every request must carry the shared token ({@code
 * Authorization: Bearer ...}): the answer tells about other namespaces' volumes.
 *
 * <p>{@code GET /healthz} answers without a token, for the webhook's readiness.
 *
 * <p>Answers: 200 {@code {"allowed": true, "source": {...}}} or {@code {"allowed": false, "reason":
 * "..."}}; 401 without the token; 400 for a body that is not a check; 503 when the cluster or
 * Cinder could not be asked (the webhook then applies its failure policy).
 */
public final class ResolverServer {

  public static final String PATH = "/v1/clone-check";
  private static final Logger LOG = LoggerFactory.getLogger(ResolverServer.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Vertx vertx;
  private final CloneResolver resolver;
  private final ClusterReader cluster;
  private final byte[] token;
  private HttpServer server;

  public ResolverServer(Vertx vertx, CloneResolver resolver, ClusterReader cluster, String token) {
    this.vertx = vertx;
    this.resolver = resolver;
    this.cluster = cluster;
    this.token = ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
  }

  /**
   * Listens on a loopback address only.
   *
   * @throws IllegalArgumentException for any other address
   */
  public Future<HttpServer> listen(String host, int port) {
    try {
      if (!InetAddress.getByName(host).isLoopbackAddress()) {
        throw new IllegalArgumentException(
            "the clone check listens on loopback only (127.0.0.1, ::1), not " + host);
      }
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("unknown listen address " + host, e);
    }
    Router router = Router.router(vertx);
    // For the webhook's readiness: says nothing about any volume, so it needs no token.
    router.get("/healthz").handler(ctx -> ctx.response().end("ok\n"));
    router.post(PATH).handler(BodyHandler.create(false).setBodyLimit(1 << 20)).handler(this::check);
    return vertx
        .createHttpServer()
        .requestHandler(router)
        .listen(port, host)
        .onSuccess(s -> server = s);
  }

  private void check(RoutingContext ctx) {
    String auth = ctx.request().getHeader("Authorization");
    if (auth == null || !MessageDigest.isEqual(auth.getBytes(StandardCharsets.UTF_8), token)) {
      ctx.response().setStatusCode(401).end("a valid token is needed\n");
      return;
    }
    ClaimRef source;
    PersistentVolumeClaim claim;
    try {
      JsonNode body = JSON.readTree(ctx.body().buffer().getBytes());
      String ref = body.path("source").asText("");
      claim = JSON.treeToValue(body.path("claim"), PersistentVolumeClaim.class);
      if (claim == null || claim.getMetadata() == null || claim.getSpec() == null) {
        throw new IllegalArgumentException("no claim");
      }
      source = ClaimRef.parseCloneRequest(ref, claim.getMetadata().getNamespace());
    } catch (Exception e) {
      ctx.response()
          .setStatusCode(400)
          .end("expected {\"source\": \"ns/name\", \"claim\": {...}}: " + e.getMessage() + "\n");
      return;
    }
    vertx
        .<ObjectNode>executeBlocking(() -> answer(source, claim), false)
        .onSuccess(
            a -> ctx.response().putHeader("Content-Type", "application/json").end(a.toString()))
        .onFailure(
            e -> {
              LOG.warn("clone check of {} failed: {}", source, e.toString());
              ctx.response()
                  .setStatusCode(503)
                  .end("the clone check could not ask: " + e.getMessage() + "\n");
            });
  }

  /** Blocking: API server and Cinder lookups. */
  private ObjectNode answer(ClaimRef ref, PersistentVolumeClaim claim) {
    ObjectNode a = JSON.createObjectNode();
    String className = claim.getSpec().getStorageClassName();
    StorageClass sc = className == null ? null : cluster.storageClass(className).orElse(null);
    if (sc == null) {
      return a.put("allowed", false).put("reason", "StorageClass " + className + " does not exist");
    }
    try {
      // The webhook asks before the claim exists: there is no consent read to compare with.
      VolumeSource s = resolver.resolve(ref, claim, sc, null);
      a.put("allowed", true);
      ObjectNode src = a.putObject("source");
      src.put("claim", s.claim().toString());
      src.put("volumeId", s.volumeId());
      src.put("sizeGib", s.sizeGib());
      src.put("availabilityZone", s.availabilityZone());
      src.put("volumeType", s.volumeType());
      src.put("status", s.status());
      return a;
    } catch (ProvisioningException e) {
      return a.put("allowed", false).put("reason", e.getMessage());
    }
  }

  public int port() {
    return server.actualPort();
  }

  public Future<Void> close() {
    return server == null ? Future.succeededFuture() : server.close();
  }
}
