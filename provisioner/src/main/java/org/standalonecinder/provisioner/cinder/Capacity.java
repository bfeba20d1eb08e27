package org.standalonecinder.provisioner.cinder;

/**
 * A pool capacity as a driver reports it: a number of GiB, or the strings {@code "infinite"} and
 * {@code "unknown"} that thin and misconfigured backends send.
 */
public sealed interface Capacity {

  /** A known amount. */
  record Gib(double value) implements Capacity {
    @Override
    public String toString() {
      return value + " GiB";
    }
  }

  /** The backend reports no limit. */
  record Infinite() implements Capacity {
    @Override
    public String toString() {
      return "infinite";
    }
  }

  /** The backend could not tell (e.g. Ceph without a manager). */
  record Unknown() implements Capacity {
    @Override
    public String toString() {
      return "unknown";
    }
  }

  /** Parses Cinder's JSON value: a number, a numeric string, "infinite" or "unknown". */
  static Capacity parse(Object raw) {
    if (raw instanceof Number n) {
      return new Gib(n.doubleValue());
    }
    if (raw == null) {
      return new Unknown();
    }
    String s = raw.toString().trim();
    if (s.equalsIgnoreCase("infinite")) {
      return new Infinite();
    }
    try {
      return new Gib(Double.parseDouble(s));
    } catch (NumberFormatException e) {
      return new Unknown();
    }
  }
}
