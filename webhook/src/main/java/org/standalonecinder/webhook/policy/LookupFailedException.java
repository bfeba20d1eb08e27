package org.standalonecinder.webhook.policy;

/**
 * The API server could not answer a lookup the rules need. The request is then denied (the webhook
 * fails closed) with this message, which says what could not be looked up and why.
 */
public final class LookupFailedException extends RuntimeException {

  public LookupFailedException(String what, Throwable cause) {
    super("cannot look up " + what + ": " + reason(cause), cause);
  }

  /** The innermost cause says what went wrong (fabric8's outer message only names the call). */
  private static String reason(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String m = root.getMessage();
    return m == null || m.isBlank() ? root.getClass().getSimpleName() : m;
  }
}
