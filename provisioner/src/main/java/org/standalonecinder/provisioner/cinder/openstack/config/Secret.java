package org.standalonecinder.provisioner.cinder.openstack.config;

import java.util.Objects;

/**
 * A password, application credential secret or token. Its {@link #toString()} never shows the
 * value, so a secret cannot leak through a log line, an exception message or a config dump.
 */
public final class Secret {

  private final String value;

  private Secret(String value) {
    this.value = Objects.requireNonNull(value, "value");
  }

  /** Wraps a value; null stays null. */
  public static Secret of(String value) {
    return value == null ? null : new Secret(value);
  }

  /** The value itself: only for the request that needs it. */
  public String reveal() {
    return value;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Secret s && s.value.equals(value);
  }

  @Override
  public int hashCode() {
    return value.hashCode();
  }

  @Override
  public String toString() {
    return "***";
  }
}
