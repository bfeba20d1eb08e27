package org.standalonecinder.provisioner.cinder.openstack;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.security.cert.CertificateException;
import java.util.Iterator;
import javax.net.ssl.SSLException;
import org.openstack4j.core.transport.HttpResponse;
import org.standalonecinder.provisioner.cinder.CinderException;

/** The one place where HTTP answers and transport failures become {@link CinderException}s. */
final class Errors {

  private static final ObjectMapper JSON = new ObjectMapper();

  private Errors() {}

  static String requestId(HttpResponse r) {
    String id = r.header("X-Openstack-Request-Id");
    return id != null ? id : r.header("X-Compute-Request-Id");
  }

  /**
   * Cinder wraps errors as {@code {"itemNotFound": {"code": 404, "message": "..."}}}, Keystone as
   * {@code {"error": {"message": "..."}}}; anything else is shown as the status line.
   */
  static String message(int status, String body) {
    try {
      JsonNode root = JSON.readTree(body);
      if (root != null && root.isObject()) {
        for (Iterator<JsonNode> it = root.elements(); it.hasNext(); ) {
          JsonNode inner = it.next();
          if (inner.hasNonNull("message")) {
            return inner.get("message").asText();
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      // not JSON: fall through to the status line
    }
    return "HTTP " + status;
  }

  /** Maps a non-2xx answer; {@code what} names the call, e.g. "GET volume 1234". */
  static CinderException fromStatus(String what, int status, String body, String requestId) {
    String msg = what + ": " + message(status, body);
    return switch (status) {
      case 400, 422 -> new CinderException.BadRequest(msg, status, requestId);
      case 401 -> new CinderException.Unauthorized(msg, requestId);
      case 403 -> new CinderException.Forbidden(msg, requestId);
      case 404 -> new CinderException.NotFound(msg, requestId);
      case 405, 406, 501 -> new CinderException.Unsupported(msg, status, requestId);
      case 409 -> new CinderException.Conflict(msg, requestId);
      case 413 -> new CinderException.QuotaExceeded(msg, requestId);
      default ->
          status >= 500 || status == 408 || status == 429
              ? new CinderException.Unavailable(msg, status, requestId, null)
              : new CinderException.BadRequest(msg, status, requestId);
    };
  }

  /** A call that got no answer: TLS trouble is our configuration, the rest is the network. */
  static CinderException fromTransport(String what, Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      if (root instanceof SSLException || root instanceof CertificateException) {
        break;
      }
      root = root.getCause();
    }
    if (root instanceof SSLException || root instanceof CertificateException) {
      return new CinderException.Misconfigured(
          what
              + ": TLS failed ("
              + root.getMessage()
              + "); set ca-file to the CA that signed the server's certificate",
          e);
    }
    return new CinderException.Unavailable(
        what + ": no answer from Cinder: " + whyNoAnswer(e, root), 0, null, e);
  }

  /**
   * What went wrong, in words an admin can act on; the libraries' own texts (okio's "\n not found:
   * limit=0 content=…" for a connection closed mid-answer) say little.
   */
  private static String whyNoAnswer(Throwable e, Throwable root) {
    String message = root.getMessage() == null ? "" : root.getMessage().strip();
    if (root instanceof java.net.ConnectException) {
      return "connection refused (is cinder-api running and is the endpoint right?)";
    }
    // Looked for along the whole chain: OkHttp's call timeout closes the socket under the read,
    // so its InterruptedIOException("timeout") carries a "Socket closed" that is no closed
    // connection of Cinder's.
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (isTimeout(t)) {
        return "timed out";
      }
    }
    if (root instanceof java.net.UnknownHostException) {
      return "unknown host " + message;
    }
    if (root instanceof java.io.EOFException || root instanceof java.net.SocketException) {
      return "the connection was closed before the answer came";
    }
    return message.isEmpty() ? root.getClass().getSimpleName() : message;
  }

  private static boolean isTimeout(Throwable t) {
    return t instanceof java.net.SocketTimeoutException
        || (t instanceof java.io.InterruptedIOException
            && "timeout".equals(t.getMessage() == null ? null : t.getMessage().strip()));
  }
}
