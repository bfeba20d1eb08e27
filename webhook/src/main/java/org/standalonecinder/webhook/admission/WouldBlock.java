package org.standalonecinder.webhook.admission;

/**
 * A lookup was asked for on a thread that must not block (an event loop). The HTTP layer first
 * decides a review where it arrived, since most reviews need no lookup at all (a plain claim, an
 * update that changes nothing the rules read, a StorageClass), and decides it again on a worker
 * when this is thrown. Controllers let it pass: it is no failure of theirs.
 */
public final class WouldBlock extends RuntimeException {

  /** One instance: thrown often under load, it carries no stack trace. */
  public static final WouldBlock INSTANCE = new WouldBlock();

  private WouldBlock() {
    super("a lookup would block this thread", null, false, false);
  }
}
