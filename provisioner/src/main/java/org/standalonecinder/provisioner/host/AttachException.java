package org.standalonecinder.provisioner.host;

/**
 * The volume cannot be attached or detached as asked, and nothing was changed: it is unknown, in a
 * status that forbids it, or the attachment to end is not clear. The message says which.
 */
public final class AttachException extends RuntimeException {

  public AttachException(String message) {
    super(message);
  }
}
