package org.standalonecinder.webhook.http;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;

/**
 * A bounded resource (bytes of reviews in flight, open connections) shared by client addresses so
 * that no set of clients can lock another out. Each client may hold at most {@code perClient}, and
 * all together at most {@code total}. When the total is reached, a newcomer is not simply turned
 * away: the client that holds the most yields its newest holdings, as long as it would still hold
 * more than the newcomer then does. A flood from k addresses thus keeps at most k/(k+1) of the
 * total, and a client that holds little (the API server: its reviews are a few KiB, answered in
 * milliseconds, over one or two connections) always gets in. Equal holders never displace each
 * other: who holds the most is the one to yield, and then only for one who holds less.
 *
 * <p>Without {@code --client-ca} the webhook cannot tell the API server from a pod; this is what
 * protects it then. With it, the API server's connections are exempt altogether.
 *
 * <p>Thread-safe: admissions from every event loop take one lock, for a few map operations; what a
 * displaced holding must do to give its resource back (close a connection, reset a stream) is the
 * caller's {@link Holding#displace} action, which must not block.
 */
final class FairShare {

  /** Why a newcomer was refused, or null when admitted. */
  enum Refusal {
    /** The client holds all it may. */
    CLIENT,
    /** The total is reached and no client holds more than the newcomer would. */
    TOTAL
  }

  /** What one admission holds, until {@link #release()}. */
  final class Holding {
    private final String client;
    private final long amount;
    private final Runnable displace;
    private boolean released;

    private Holding(String client, long amount, Runnable displace) {
      this.client = client;
      this.amount = amount;
      this.displace = displace;
    }

    /**
     * Gives the amount back; safe to call more than once, and after a displacement.
     *
     * @return whether this call gave it back (false: already given back, or displaced)
     */
    boolean release() {
      synchronized (FairShare.this) {
        if (released) {
          return false;
        }
        released = true;
        held -= amount;
        Client c = clients.get(client);
        c.amount -= amount;
        c.holdings.remove(this);
        if (c.holdings.isEmpty()) {
          clients.remove(client);
        }
        return true;
      }
    }
  }

  /** The outcome of {@link #admit}: a holding, or why none. */
  record Admission(Holding holding, Refusal refusal, int displaced) {}

  private static final class Client {
    long amount;
    final Deque<Holding> holdings = new ArrayDeque<>();
  }

  private final long total;
  private final long perClient;
  private final Map<String, Client> clients = new HashMap<>();
  private long held;

  FairShare(long total, long perClient) {
    this.total = total;
    this.perClient = perClient;
  }

  /**
   * Takes {@code amount} for {@code client}, displacing the newest holdings of the client that
   * holds the most when the total is reached (their {@code displace} actions run after the lock is
   * let go, and their amounts are given back at once).
   *
   * @param displace what to do if this holding is displaced later (close, reset)
   */
  Admission admit(String client, long amount, Runnable displace) {
    Deque<Holding> displaced = new ArrayDeque<>();
    Admission result;
    synchronized (this) {
      result = take(client, amount, displace, displaced);
    }
    displaced.forEach(h -> h.displace.run());
    return result;
  }

  private Admission take(String client, long amount, Runnable displace, Deque<Holding> displaced) {
    Client mine = clients.get(client);
    long have = mine == null ? 0 : mine.amount;
    if (have + amount > perClient) {
      return new Admission(null, Refusal.CLIENT, 0);
    }
    if (held + amount <= total) {
      // The common case, on every review: room enough, nothing to plan.
      return new Admission(hold(client, amount, displace), null, 0);
    }
    // Planned on copies first: nothing is displaced unless that makes room.
    Map<String, Long> amounts = new HashMap<>();
    Map<String, java.util.Iterator<Holding>> newestFirst = new HashMap<>();
    clients.forEach(
        (k, c) -> {
          amounts.put(k, c.amount);
          newestFirst.put(k, c.holdings.descendingIterator());
        });
    long room = total - held;
    while (room < amount) {
      String most = mostHeldExcept(amounts, client);
      if (most == null || amounts.get(most) <= have + amount) {
        return new Admission(null, Refusal.TOTAL, 0);
      }
      Holding newest = newestFirst.get(most).next();
      amounts.merge(most, -newest.amount, Long::sum);
      room += newest.amount;
      displaced.add(newest);
    }
    for (Holding d : displaced) {
      d.released = true;
      held -= d.amount;
      Client c = clients.get(d.client);
      c.amount -= d.amount;
      c.holdings.remove(d);
      if (c.holdings.isEmpty()) {
        clients.remove(d.client);
      }
    }
    return new Admission(hold(client, amount, displace), null, displaced.size());
  }

  private Holding hold(String client, long amount, Runnable displace) {
    Holding h = new Holding(client, amount, displace);
    Client c = clients.computeIfAbsent(client, k -> new Client());
    c.holdings.addLast(h);
    c.amount += amount;
    held += amount;
    return h;
  }

  private static String mostHeldExcept(Map<String, Long> amounts, String client) {
    String most = null;
    long max = 0;
    for (Map.Entry<String, Long> e : amounts.entrySet()) {
      // Ties go to the first name, so that the outcome does not depend on the map's order.
      boolean more =
          e.getValue() > max
              || (e.getValue() == max && most != null && e.getKey().compareTo(most) < 0);
      if (!e.getKey().equals(client) && more) {
        max = e.getValue();
        most = e.getKey();
      }
    }
    return most;
  }

  /** What {@code client} holds now. */
  synchronized long heldBy(String client) {
    Client c = clients.get(client);
    return c == null ? 0 : c.amount;
  }

  /** What all clients hold now. */
  synchronized long held() {
    return held;
  }
}
