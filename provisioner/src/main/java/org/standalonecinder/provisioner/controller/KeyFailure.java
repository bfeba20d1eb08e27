package org.standalonecinder.provisioner.controller;

/**
 * One failed attempt of a key.
 *
 * @param reason the event reason
 * @param message what failed
 * @param attempt how many attempts in a row failed, this one included
 * @param isFinal whether no retry can help
 * @param gaveUp whether the key is not retried (until it changes or the resync)
 */
public record KeyFailure(
    String reason, String message, int attempt, boolean isFinal, boolean gaveUp) {

  /** The message as told: a key given up after retries says so. */
  public String note() {
    return gaveUp && !isFinal
        ? message
            + " (gave up after "
            + attempt
            + " attempts; will try again at the next change or resync)"
        : message;
  }
}
