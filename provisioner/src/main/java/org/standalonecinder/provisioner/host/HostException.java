package org.standalonecinder.provisioner.host;

/**
 * This host cannot do what was asked: it lacks an initiator name or a tool, is not root, or the
 * device never appeared. The message says what to change on the host.
 */
public final class HostException extends RuntimeException {

  public HostException(String message) {
    super(message);
  }

  public HostException(String message, Throwable cause) {
    super(message, cause);
  }
}
