package org.standalonecinder.provisioner.cinder;

import java.util.ArrayDeque;
import java.util.Deque;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The undo steps of what a provisioning attempt has done so far, run in reverse order when a later
 * step fails. Every step must be safe to repeat (deleting what is gone is not an error), so a
 * rollback that itself fails half-way can simply run again on the next attempt.
 */
public final class Rollback {

  private static final Logger LOG = LoggerFactory.getLogger(Rollback.class);

  private final Deque<Step> steps = new ArrayDeque<>();

  private record Step(String name, Runnable undo) {}

  /** Adds the undo of a step that has just been done. */
  public void push(String name, Runnable undo) {
    steps.push(new Step(name, undo));
  }

  /** Runs every step, newest first; failures are attached to {@code cause}, never thrown. */
  public void run(Throwable cause) {
    while (!steps.isEmpty()) {
      Step s = steps.pop();
      try {
        s.undo().run();
      } catch (RuntimeException e) {
        LOG.warn("rollback step '{}' failed: {}", s.name(), e.getMessage());
        cause.addSuppressed(e);
      }
    }
  }
}
