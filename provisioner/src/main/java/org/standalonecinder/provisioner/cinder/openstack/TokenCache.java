package org.standalonecinder.provisioner.cinder.openstack;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * Reuses a token until shortly before it expires, and drops it when Cinder refuses it.
 *
 * <p>Renewal starts {@link #MARGIN} before expiry so that a call never starts with a token about to
 * lapse; a token with a shorter life is renewed when half of it has passed.
 */
final class TokenCache {

  static final Duration MARGIN = Duration.ofMinutes(5);

  private final Authenticator authenticator;
  private final Clock clock;
  private AuthToken token;
  private Instant renewAt;

  TokenCache(Authenticator authenticator, Clock clock) {
    this.authenticator = authenticator;
    this.clock = clock;
  }

  synchronized AuthToken current() {
    Instant now = clock.instant();
    if (token == null || (renewAt != null && !now.isBefore(renewAt))) {
      token = authenticator.authenticate();
      renewAt = renewalPoint(now, token.expiresAt());
    }
    return token;
  }

  /** Forgets {@code stale} unless another thread already replaced it. */
  synchronized void invalidate(AuthToken stale) {
    if (token == stale) {
      token = null;
    }
  }

  static Instant renewalPoint(Instant issued, Instant expires) {
    if (expires == null) {
      return null;
    }
    Duration life = Duration.between(issued, expires);
    Duration early = life.compareTo(MARGIN.multipliedBy(2)) < 0 ? life.dividedBy(2) : MARGIN;
    return expires.minus(early);
  }
}
