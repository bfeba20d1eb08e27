package org.standalonecinder.provisioner.cinder.openstack;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import okhttp3.mockwebserver.Dispatcher;
import okhttp3.mockwebserver.MockResponse;
import okhttp3.mockwebserver.MockWebServer;
import okhttp3.mockwebserver.RecordedRequest;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig;
import org.standalonecinder.provisioner.cinder.openstack.config.ConfigKey;
import org.standalonecinder.provisioner.cinder.openstack.config.Setting;

/**
 * A Keystone and a Cinder on one MockWebServer, answering with the lab's recorded responses unless
 * a test queues something else. Keystone lives under {@code /identity/v3}, Cinder under {@code
 * /volume/v3/<project>}; the version document at {@code /volume/}.
 */
public final class MockCloud implements AutoCloseable {

  public static final ObjectMapper JSON = new ObjectMapper();
  public static final String PROJECT = "30543a7fe9334f6194de775b13aff533";

  final MockWebServer server = new MockWebServer();
  final List<RecordedRequest> keystoneRequests = Collections.synchronizedList(new ArrayList<>());
  final List<RecordedRequest> cinderRequests = Collections.synchronizedList(new ArrayList<>());
  private final Deque<Function<RecordedRequest, MockResponse>> cinder = new ArrayDeque<>();
  private final Deque<Function<RecordedRequest, MockResponse>> keystone = new ArrayDeque<>();
  private Function<RecordedRequest, MockResponse> cinderDefault =
      r -> recorded("get-volume-available.json");
  private Function<RecordedRequest, MockResponse> keystoneDefault = r -> token("token-default");
  private ArrayNode catalog;
  private String expiresAt = "2099-01-01T00:00:00.000000Z";
  private volatile String maxVersion;

  public MockCloud() {
    server.setDispatcher(
        new Dispatcher() {
          @Override
          public MockResponse dispatch(RecordedRequest r) {
            String path = r.getPath();
            if (path.startsWith("/identity/")) {
              keystoneRequests.add(r);
              return next(keystone, keystoneDefault).apply(r);
            }
            if (path.equals("/volume/") || path.equals("/volume")) {
              return versions();
            }
            cinderRequests.add(r);
            return next(cinder, cinderDefault).apply(r);
          }
        });
    try {
      server.start(java.net.InetAddress.getByName("127.0.0.1"), 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    catalog = (ArrayNode) load("keystone-token.json").path("body").path("token").path("catalog");
    rewriteCatalog();
  }

  private synchronized Function<RecordedRequest, MockResponse> next(
      Deque<Function<RecordedRequest, MockResponse>> q, Function<RecordedRequest, MockResponse> d) {
    Function<RecordedRequest, MockResponse> f = q.poll();
    return f != null ? f : d;
  }

  /** Points the recorded catalog's URLs at this server. */
  private void rewriteCatalog() {
    for (JsonNode svc : catalog) {
      for (JsonNode ep : svc.path("endpoints")) {
        String type = svc.path("type").asText();
        String url = type.equals("identity") ? url("/identity/v3") : url("/volume/v3/" + PROJECT);
        ((ObjectNode) ep).put("url", url);
      }
    }
  }

  /** How many requests Keystone was sent. */
  public int keystoneRequestCount() {
    return keystoneRequests.size();
  }

  /**
   * The URL of a path on this server, by address: "localhost" may also resolve to ::1, where
   * nothing listens, and a client that falls back to it reports "connection refused" instead of
   * what the test staged (a Debian /etc/hosts names both).
   */
  public String url(String path) {
    return server.url(path).newBuilder().host("127.0.0.1").build().toString();
  }

  /**
   * A client of this cloud's Cinder without keystone (its endpoint and project given, a 2 s request
   * timeout); the caller closes it.
   */
  public OpenStackCinderClient noauthClient() {
    Map<ConfigKey, Setting> s = new EnumMap<>(ConfigKey.class);
    s.put(ConfigKey.CINDER_ENDPOINT, new Setting(url("/volume/v3"), "test"));
    s.put(ConfigKey.TENANT_ID, new Setting(PROJECT, "test"));
    s.put(ConfigKey.REQUEST_TIMEOUT, new Setting("2", "test"));
    return OpenStackCinderClient.create(CloudConfig.from(s));
  }

  public synchronized MockCloud thenCinder(Function<RecordedRequest, MockResponse> f) {
    cinder.add(f);
    return this;
  }

  public synchronized MockCloud thenCinder(MockResponse r) {
    return thenCinder(req -> r);
  }

  public synchronized MockCloud cinderAlways(Function<RecordedRequest, MockResponse> f) {
    cinderDefault = f;
    return this;
  }

  public synchronized MockCloud thenKeystone(MockResponse r) {
    keystone.add(req -> r);
    return this;
  }

  public synchronized MockCloud keystoneAlways(Function<RecordedRequest, MockResponse> f) {
    keystoneDefault = f;
    return this;
  }

  public MockCloud catalog(ArrayNode c) {
    this.catalog = c;
    return this;
  }

  public ArrayNode catalog() {
    return catalog;
  }

  /** The version document names {@code max} as the newest microversion (the lab's: 3.70). */
  public MockCloud maxVersion(String max) {
    this.maxVersion = max;
    return this;
  }

  private MockResponse versions() {
    MockResponse r = recorded("versions-root.json");
    if (maxVersion == null) {
      return r;
    }
    ObjectNode body = (ObjectNode) load("versions-root.json").get("body").deepCopy();
    ((ObjectNode) body.path("versions").get(0)).put("version", maxVersion);
    return r.setBody(body.toString());
  }

  public MockCloud expiresAt(String instant) {
    this.expiresAt = instant;
    return this;
  }

  /** A Keystone 201 with the recorded body, this mock's catalog and the given token id. */
  public MockResponse token(String id) {
    ObjectNode body = (ObjectNode) load("keystone-token.json").get("body").deepCopy();
    ObjectNode t = (ObjectNode) body.get("token");
    t.set("catalog", catalog);
    t.put("expires_at", expiresAt);
    return new MockResponse()
        .setResponseCode(201)
        .setHeader("Content-Type", "application/json")
        .setHeader("X-Subject-Token", id)
        .setBody(body.toString());
  }

  public static JsonNode load(String name) {
    try (InputStream in = MockCloud.class.getResourceAsStream("/transcripts/" + name)) {
      if (in == null) {
        throw new IllegalArgumentException("no transcript " + name);
      }
      return JSON.readTree(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The recorded answer: status, request id and body as the real Cinder sent them. */
  public static MockResponse recorded(String name) {
    JsonNode t = load(name);
    MockResponse r =
        new MockResponse()
            .setResponseCode(t.path("status").asInt())
            .setHeader("Content-Type", "application/json");
    if (t.hasNonNull("requestId")) {
      r.setHeader("X-Openstack-Request-Id", t.get("requestId").asText());
    }
    JsonNode body = t.get("body");
    r.setBody(
        body == null || body.isNull() || body.asText().equals("") && !body.isObject()
            ? ""
            : body.toString());
    return r;
  }

  public static MockResponse status(int code, String body) {
    return new MockResponse()
        .setResponseCode(code)
        .setHeader("Content-Type", "application/json")
        .setHeader("X-Openstack-Request-Id", "req-mock-" + code)
        .setBody(body);
  }

  @Override
  public void close() throws IOException {
    server.shutdown();
  }
}
