package org.standalonecinder.provisioner.controller;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * How work that Cinder carries in the background is followed by every loop: when the key is looked
 * at again, and how the time so far is told. No worker waits for Cinder: a step starts the work (or
 * finds it started), says when to look again, and returns.
 *
 * <p>An instance remembers when this process first saw each piece of work under way. That is the
 * age the looks are timed by where Cinder keeps no start time of its own (a delete, an extend), and
 * a bound on a skewed Cinder clock where it does. An entry not looked at for {@link
 * #FORGOTTEN_AFTER} is forgotten: its key went some way this process did not see.
 */
public final class Pace {

  /**
   * The first look again after work was found under way: a blank volume (Cinder makes one in a few
   * hundred milliseconds) is seen made within a tenth of a second of it.
   */
  public static final Duration FIRST_LOOK = Duration.ofMillis(100);

  /** The longest time between two looks at work under way. */
  public static final Duration LONGEST_LOOK = Duration.ofSeconds(30);

  /** How long an entry is kept without a look: far past {@link #LONGEST_LOOK}. */
  public static final Duration FORGOTTEN_AFTER = Duration.ofMinutes(10);

  private static final long[] MINUTES = {1, 2, 5, 10, 15, 20, 30, 45};

  private final Clock clock;
  private final Map<String, Seen> seen = new ConcurrentHashMap<>();

  private record Seen(Instant first, Instant last) {}

  public Pace(Clock clock) {
    this.clock = clock;
  }

  /**
   * How long this process has seen {@code what} under way, counting from its first look (zero at
   * the first). Each call is a look: it keeps the entry.
   */
  public Duration seen(String what) {
    Instant now = clock.instant();
    seen.values().removeIf(old -> old.last().isBefore(now.minus(FORGOTTEN_AFTER)));
    Seen s = seen.compute(what, (k, old) -> new Seen(old == null ? now : old.first(), now));
    return Duration.between(s.first(), now);
  }

  /** Whether this process has seen {@code what} under way (and not forgotten it since). */
  public boolean knows(String what) {
    return seen.containsKey(what);
  }

  /** {@code what} is finished or gone: nothing more is remembered of it. */
  public void done(String what) {
    seen.remove(what);
  }

  /** How many pieces of work are remembered: for tests. */
  int remembered() {
    return seen.size();
  }

  /**
   * When to look again at work under way for {@code soFar}: a quarter of that, at least {@link
   * #FIRST_LOOK} and at most {@link #LONGEST_LOOK}. A blank volume is seen ready within a tenth of
   * a second of it; an hours-long restore costs Cinder a look every half minute.
   */
  public static Duration nextLook(Duration soFar) {
    return nextLook(soFar, FIRST_LOOK);
  }

  /** As {@link #nextLook(Duration)}, never sooner than {@code first} (for tests: sooner). */
  public static Duration nextLook(Duration soFar, Duration first) {
    Duration quarter = soFar.dividedBy(4);
    if (quarter.compareTo(first) < 0) {
      return first;
    }
    return quarter.compareTo(LONGEST_LOOK) > 0 ? LONGEST_LOOK : quarter;
  }

  /**
   * How long so far, in steps that change ever more rarely ({@code under a minute}, 1, 2, 5, 10,
   * 15, 20, 30, 45 minutes, then each half hour): an event is written anew when its words change,
   * and the same words again at most once per the event recorder's quiet time (10 min).
   */
  public static String soFar(Duration d) {
    long minutes = d.toMinutes();
    if (minutes < 1) {
      return "under a minute so far";
    }
    if (minutes < 60) {
      long shown = 1;
      for (long m : MINUTES) {
        if (m <= minutes) {
          shown = m;
        }
      }
      return shown + (shown == 1 ? " minute" : " minutes") + " so far";
    }
    long halfHours = minutes / 30;
    long hours = halfHours / 2;
    return hours + " h" + (halfHours % 2 == 1 ? " 30 min" : "") + " so far";
  }

  /** The shorter of two ages: see {@link #seen} on a skewed clock. */
  public static Duration shorter(Duration a, Duration b) {
    return a.compareTo(b) < 0 ? a : b;
  }
}
