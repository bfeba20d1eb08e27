package org.standalonecinder.provisioner.cinder.openstack;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.ResponseBody;
import okio.BufferedSource;
import org.openstack4j.api.exceptions.ClientResponseException;
import org.openstack4j.api.exceptions.ConnectionException;
import org.openstack4j.core.transport.ClientConstants;
import org.openstack4j.core.transport.Config;
import org.openstack4j.core.transport.ExecutionOptions;
import org.openstack4j.core.transport.HttpEntityHandler;
import org.openstack4j.core.transport.HttpExecutorService;
import org.openstack4j.core.transport.HttpMethod;
import org.openstack4j.core.transport.HttpRequest;
import org.openstack4j.core.transport.HttpResponse;
import org.openstack4j.core.transport.ObjectMapperSingleton;

/**
 * openstack4j's HTTP connector, replaced (found through {@code META-INF/services}).
 *
 * <p>The stock OkHttp connector builds a new client for every request (no connection reuse), cannot
 * take a custom CA on JDK 9+ ({@code sslSocketFactory} without a trust manager throws), and
 * re-authenticates by itself on 401, which fails for a session made from a token. This one runs
 * every request of a {@link Config} on the pooled {@link OkHttpClient} registered for it (its CA,
 * its timeouts), leaves 401 to the adapter, and reads each body fully (capped) so that no
 * connection is left open by a caller that forgets to close.
 */
public final class OkHttpTransport implements HttpExecutorService {

  /** Cinder and Keystone answers are small; anything bigger is garbage. */
  static final long MAX_BODY_BYTES = 16L * 1024 * 1024;

  // By identity: Config.equals compares settings, and two adapters may have equal settings.
  private static final Map<Config, OkHttpClient> CLIENTS =
      Collections.synchronizedMap(new IdentityHashMap<>());

  /**
   * Routes every request made with {@code config} through {@code client}. Configs are compared by
   * identity, so each adapter registers its own instance.
   */
  static void register(Config config, OkHttpClient client) {
    CLIENTS.put(config, client);
  }

  static void unregister(Config config) {
    CLIENTS.remove(config);
  }

  /**
   * Sends a request outside an openstack4j session (Keystone, the version document), a transport
   * failure mapped as every call's is; {@code what} names the call in the error.
   */
  static BufferedResponse execute(
      org.openstack4j.core.transport.HttpRequest<?> request, String what) {
    try {
      return (BufferedResponse)
          org.openstack4j.core.transport.internal.HttpExecutor.create().execute(request);
    } catch (org.openstack4j.api.exceptions.ConnectionException e) {
      throw Errors.fromTransport(what, e.getCause() == null ? e : e.getCause());
    }
  }

  @Override
  public <R> HttpResponse execute(HttpRequest<R> request) {
    OkHttpClient client = CLIENTS.get(request.getConfig());
    if (client == null) {
      throw new IllegalStateException(
          "no HTTP client registered for this openstack4j Config; use OpenStackCinderClient");
    }
    Request.Builder b = new Request.Builder().url(request.getUrl());
    if (request.hasHeaders()) {
      request.getHeaders().forEach((k, v) -> b.header(k, String.valueOf(v)));
    }
    b.method(request.getMethod().name(), body(request));
    try (Response response = client.newCall(b.build()).execute()) {
      return new BufferedResponse(response);
    } catch (IOException e) {
      throw new ConnectionException(e.getMessage(), 0, e);
    }
  }

  private static RequestBody body(HttpRequest<?> request) {
    try {
      if (request.getEntity() != null) {
        String json =
            ObjectMapperSingleton.getContext(request.getEntity().getClass())
                .writer()
                .writeValueAsString(request.getEntity());
        return RequestBody.create(json, MediaType.get(request.getContentType()));
      }
      if (request.hasJson()) {
        return RequestBody.create(
            request.getJson(), MediaType.get(ClientConstants.CONTENT_TYPE_JSON));
      }
    } catch (IOException e) {
      throw new ClientResponseException("cannot encode request: " + e.getMessage(), 0, e);
    }
    HttpMethod m = request.getMethod();
    // OkHttp insists on a body for these; Cinder's bodiless actions take an empty one.
    return m == HttpMethod.POST || m == HttpMethod.PUT || m == HttpMethod.PATCH
        ? RequestBody.create(new byte[0], null)
        : null;
  }

  @Override
  public String getExecutorDisplayName() {
    return "standalone-cinder pooled OkHttp";
  }

  /** A response whose body was read at once; closing it is a no-op. */
  static final class BufferedResponse implements HttpResponse {
    private final int status;
    private final String message;
    private final Map<String, String> headers = new HashMap<>();
    private final Map<String, List<String>> rawHeaders;
    private final byte[] body;
    private final String contentType;

    BufferedResponse(Response r) throws IOException {
      this.status = r.code();
      this.message = r.message();
      for (String name : r.headers().names()) {
        headers.put(name, r.header(name));
      }
      this.rawHeaders = r.headers().toMultimap();
      ResponseBody rb = r.body();
      this.contentType =
          rb == null || rb.contentType() == null ? null : rb.contentType().toString();
      this.body = rb == null ? new byte[0] : readCapped(rb);
    }

    private static byte[] readCapped(ResponseBody rb) throws IOException {
      BufferedSource src = rb.source();
      if (!src.request(MAX_BODY_BYTES + 1)) {
        return src.readByteArray();
      }
      throw new IOException("response body larger than " + MAX_BODY_BYTES + " bytes");
    }

    String bodyText() {
      return new String(body, StandardCharsets.UTF_8);
    }

    @Override
    public <T> T getEntity(Class<T> returnType) {
      return getEntity(returnType, null);
    }

    @Override
    public <T> T getEntity(Class<T> returnType, ExecutionOptions<T> options) {
      return HttpEntityHandler.handle(this, returnType, options, Boolean.TRUE);
    }

    @Override
    public <T> T readEntity(Class<T> type) {
      try {
        return ObjectMapperSingleton.getContext(type).reader(type).readValue(body);
      } catch (IOException e) {
        throw new ClientResponseException(e.getMessage(), status, e);
      }
    }

    @Override
    public int getStatus() {
      return status;
    }

    @Override
    public String getContentType() {
      return contentType;
    }

    @Override
    public String getStatusMessage() {
      return message;
    }

    @Override
    public InputStream getInputStream() {
      return new ByteArrayInputStream(body);
    }

    @Override
    public String header(String name) {
      List<String> v = rawHeaders.get(name.toLowerCase(java.util.Locale.ROOT));
      return v == null || v.isEmpty() ? null : v.get(0);
    }

    @Override
    public Map<String, String> headers() {
      return headers;
    }

    @Override
    public void close() {}
  }
}
