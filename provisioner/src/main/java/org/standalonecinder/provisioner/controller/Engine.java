package org.standalonecinder.provisioner.controller;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every loop of the provisioner, started, stopped and handed leadership together; what {@code
 * /healthz} says of their workers, loop by loop.
 */
public final class Engine implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Engine.class);

  /** A loop with what it owns besides its engine (its informers). */
  public interface Part extends AutoCloseable {

    /** The part's loop. */
    Loop<?> loop();

    /** Starts the part's informers and its loop. */
    default void start() {
      loop().start();
    }

    /** Stops acting: a standby. */
    default void pause() {
      loop().pause();
    }

    /** Acts again, looking at everything afresh. */
    default void resume() {
      loop().resume();
    }

    /** Stops the loop and its informers, by {@link Engine#STOP_GRACE}. */
    @Override
    default void close() {
      close(Deadline.after(STOP_GRACE));
    }

    /**
     * Stops the loop and its informers, and whatever it runs off its workers, by {@code by}: what
     * still runs then is interrupted.
     *
     * @return how many workers or steps still run after that, ignoring the interrupt
     */
    default int close(Deadline by) {
      return loop().close(by);
    }

    /**
     * The Lease was lost and the process is about to exit: what runs off the workers is cut short
     * now (interrupted), not waited for, since another replica may already lead. After {@link
     * #pause}.
     */
    default void abandon() {}
  }

  /**
   * How long a stop of every loop may take, all together: within Kubernetes' default 30 s between a
   * Pod's TERM and its KILL, with time left to release the Lease and close the clients.
   */
  public static final Duration STOP_GRACE = Duration.ofSeconds(20);

  private final List<Part> parts;

  /**
   * @param parts in the order they start (a later one may read an earlier one's caches); they stop
   *     in the reverse order
   */
  public Engine(List<Part> parts) {
    this.parts = List.copyOf(parts);
  }

  public void start() {
    parts.forEach(Part::start);
  }

  /** Pauses every loop: one that fails to never keeps another acting. */
  public void pause() {
    each(parts, Part::pause, "pause");
  }

  /** Resumes every loop; one that fails to is logged, and never costs another its turn. */
  public void resume() {
    each(parts, Part::resume, "resume");
  }

  private static void each(List<Part> parts, java.util.function.Consumer<Part> step, String what) {
    for (Part p : parts) {
      try {
        step.accept(p);
      } catch (RuntimeException e) {
        LOG.error("the {} loop did not {}: {}", p.loop().name(), what, e.toString());
      }
    }
  }

  /** Cuts every loop's running work short: the Lease was lost ({@link Part#abandon}). */
  public void abandon() {
    each(parts, Part::abandon, "abandon its work");
  }

  /** Whether every worker of every loop is alive. */
  public boolean healthy() {
    return parts.stream().allMatch(p -> p.loop().healthy());
  }

  /** Each loop's workers, e.g. {@code claims: 4 of 4 workers alive (0 replaced), snapshots: …}. */
  public String workersAlive() {
    return parts.stream()
        .map(p -> p.loop().name() + ": " + p.loop().workersAlive())
        .collect(Collectors.joining(", "));
  }

  /** Pauses every loop, then closes them last first, all by one {@link #STOP_GRACE}. */
  @Override
  public void close() {
    close(Deadline.after(STOP_GRACE));
  }

  /**
   * Pauses every loop, then closes them last first, all by {@code by}: each gets an even share of
   * what is left when its turn comes, so one whose steps run long leaves the others their time.
   *
   * @return how many workers and steps still run, interrupted and ignoring it: while any does, this
   *     replica must not hand the lead on (the Lease is left to lapse instead)
   */
  public int close(Deadline by) {
    pause();
    List<Part> reversed = new ArrayList<>(parts);
    java.util.Collections.reverse(reversed);
    int left = 0;
    for (int i = 0; i < reversed.size(); i++) {
      Part p = reversed.get(i);
      try {
        left += p.close(Deadline.after(by.left().dividedBy(reversed.size() - i)));
      } catch (RuntimeException e) {
        LOG.error("the {} loop did not close: {}", p.loop().name(), e.toString());
        left++; // what it left running is not known
      }
    }
    return left;
  }
}
