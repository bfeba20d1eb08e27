package org.standalonecinder.provisioner.cinder;

import java.util.Optional;

/**
 * A failed Cinder (or Keystone) call, mapped once from the HTTP status at the adapter boundary.
 *
 * <p>Every subtype says whether the failure is final: {@link #retryable()} is true where the
 * operation may still be in progress or may succeed later (5xx, timeouts, conflicts), false for bad
 * parameters, missing objects and refused credentials. The message never contains a password, token
 * or CHAP secret.
 */
public abstract sealed class CinderException extends RuntimeException
    permits CinderException.NotFound,
        CinderException.BadRequest,
        CinderException.QuotaExceeded,
        CinderException.Unauthorized,
        CinderException.Forbidden,
        CinderException.Conflict,
        CinderException.Unavailable,
        CinderException.Unsupported,
        CinderException.Misconfigured,
        CinderException.UnexpectedState {

  private final int httpStatus;
  private final String requestId;

  protected CinderException(String message, int httpStatus, String requestId, Throwable cause) {
    super(message, cause);
    this.httpStatus = httpStatus;
    this.requestId = requestId;
  }

  /** The HTTP status Cinder answered with, or 0 when there was no answer. */
  public int httpStatus() {
    return httpStatus;
  }

  /** Cinder's {@code X-Openstack-Request-Id}, for finding the call in Cinder's logs. */
  public Optional<String> requestId() {
    return Optional.ofNullable(requestId);
  }

  /** Whether the same call may succeed if repeated later. */
  public abstract boolean retryable();

  @Override
  public String getMessage() {
    String base = super.getMessage();
    return requestId == null ? base : base + " (request " + requestId + ")";
  }

  /** 404: the volume, snapshot or attachment does not exist (any more). */
  public static final class NotFound extends CinderException {
    public NotFound(String message, String requestId) {
      super(message, 404, requestId, null);
    }

    @Override
    public boolean retryable() {
      return false;
    }
  }

  /** 400: Cinder refused the parameters or the volume's current state; carries Cinder's text. */
  public static final class BadRequest extends CinderException {
    public BadRequest(String message, int httpStatus, String requestId) {
      super(message, httpStatus, requestId, null);
    }

    @Override
    public boolean retryable() {
      return false;
    }
  }

  /**
   * 413: the project's quota (volumes, snapshots or gigabytes) would be exceeded. Retryable: the
   * same call succeeds once an admin raises the quota or other volumes are deleted, and users
   * expect their pending claims to be provisioned then without being made anew.
   */
  public static final class QuotaExceeded extends CinderException {
    public QuotaExceeded(String message, String requestId) {
      super(message, 413, requestId, null);
    }

    @Override
    public boolean retryable() {
      return true;
    }
  }

  /** 401: the credentials were refused, also after one fresh authentication. */
  public static final class Unauthorized extends CinderException {
    public Unauthorized(String message, String requestId) {
      super(message, 401, requestId, null);
    }

    @Override
    public boolean retryable() {
      return false;
    }
  }

  /** 403: authenticated, but the policy forbids the call (e.g. get_pools needs admin). */
  public static final class Forbidden extends CinderException {
    public Forbidden(String message, String requestId) {
      super(message, 403, requestId, null);
    }

    @Override
    public boolean retryable() {
      return false;
    }
  }

  /** 409: a concurrent change; the caller should look again and retry. */
  public static final class Conflict extends CinderException {
    public Conflict(String message, String requestId) {
      super(message, 409, requestId, null);
    }

    @Override
    public boolean retryable() {
      return true;
    }
  }

  /** 5xx, a timeout, a refused connection or an unreadable answer: the call may have happened. */
  public static final class Unavailable extends CinderException {
    public Unavailable(String message, int httpStatus, String requestId, Throwable cause) {
      super(message, httpStatus, requestId, cause);
    }

    @Override
    public boolean retryable() {
      return true;
    }
  }

  /** The cloud cannot do this at all, e.g. the attachments API below microversion 3.27. */
  public static final class Unsupported extends CinderException {
    public Unsupported(String message, int httpStatus, String requestId) {
      super(message, httpStatus, requestId, null);
    }

    @Override
    public boolean retryable() {
      return false;
    }
  }

  /**
   * Our configuration does not fit the cloud: no block-storage endpoint in the catalog, an unknown
   * region, a TLS certificate we do not trust.
   */
  public static final class Misconfigured extends CinderException {
    public Misconfigured(String message, Throwable cause) {
      super(message, 0, null, cause);
    }

    @Override
    public boolean retryable() {
      return false;
    }
  }

  /** A volume reached an error status, or did not reach the wanted one before the deadline. */
  public static final class UnexpectedState extends CinderException {
    private final String status;
    private final boolean timedOut;

    public UnexpectedState(String message, String status, boolean timedOut) {
      super(message, 0, null, null);
      this.status = status;
      this.timedOut = timedOut;
    }

    /** The last status seen. */
    public String status() {
      return status;
    }

    /** True when the deadline passed (the volume may still get there); false for an error state. */
    public boolean timedOut() {
      return timedOut;
    }

    @Override
    public boolean retryable() {
      return timedOut;
    }
  }
}
