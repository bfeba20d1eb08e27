package org.standalonecinder.webhook.http;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the server turned away to stay within its memory, by reason, and how many connections it
 * holds: the figures an admin alerts on (a flood, or limits too small for a busy API server). A
 * refusal is logged at most once a minute, with the counts since the last line: a flood must not
 * become a flood of log lines.
 */
public final class Shedding {

  /** Why a connection or a review was turned away. */
  public enum Reason {
    /** A connection over the limit of open connections in all. */
    CONNECTIONS,
    /** A connection over the limit of open connections from one client address. */
    CLIENT_CONNECTIONS,
    /** A review whose body would pass the bytes in flight in all (429). */
    BYTES,
    /** A review whose body would pass the bytes in flight from one client (429). */
    CLIENT_BYTES,
    /** A large or undeclared body while others are being read (429). */
    LARGE,
    /** A body declared over the API server's 3 MiB (413). */
    TOO_LARGE,
    /**
     * A review in flight, or a connection, of the client that held the most, ended to make room for
     * one that held less ({@link FairShare}).
     */
    DISPLACED;

    /** The label value: lower case, underscores. */
    public String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  private static final Logger LOG = LoggerFactory.getLogger(Shedding.class);
  private static final long LOG_EVERY_NANOS = 60_000_000_000L;

  private final Map<Reason, LongAdder> counts = new EnumMap<>(Reason.class);
  private final Map<Reason, LongAdder> unlogged = new EnumMap<>(Reason.class);
  private final AtomicLong lastLog = new AtomicLong(System.nanoTime() - LOG_EVERY_NANOS);
  final AtomicInteger open = new AtomicInteger();

  public Shedding() {
    for (Reason r : Reason.values()) {
      counts.put(r, new LongAdder());
      unlogged.put(r, new LongAdder());
    }
  }

  /** How many were turned away for this reason since the start. */
  public long count(Reason reason) {
    return counts.get(reason).sum();
  }

  /** Connections open now that count against the limits. */
  public int openConnections() {
    return open.get();
  }

  void refused(Reason reason, String detail) {
    counts.get(reason).increment();
    unlogged.get(reason).increment();
    long last = lastLog.get();
    long now = System.nanoTime();
    if (now - last >= LOG_EVERY_NANOS && lastLog.compareAndSet(last, now)) {
      StringBuilder since = new StringBuilder();
      for (Reason r : Reason.values()) {
        long n = unlogged.get(r).sumThenReset();
        if (n > 0) {
          since.append(since.length() == 0 ? "" : ", ").append(r.label()).append(' ').append(n);
        }
      }
      LOG.warn(
          "shedding load ({}); turned away since the last such line: {}; {} connections open",
          detail,
          since,
          open.get());
    }
  }
}
