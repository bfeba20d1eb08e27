package org.standalonecinder.certs;

import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;

/**
 * When to replace a certificate: at two thirds of its lifetime (as cert-manager does), which leaves
 * a third for retries if the renewal fails. Pure: the caller supplies the time.
 *
 * @param fraction the share of the lifetime after which a certificate is renewed, in (0, 1)
 */
public record RenewalPolicy(double fraction) {

  public static final RenewalPolicy TWO_THIRDS = new RenewalPolicy(2.0 / 3.0);

  public RenewalPolicy {
    if (!(fraction > 0 && fraction < 1)) {
      throw new IllegalArgumentException("fraction must be between 0 and 1, was " + fraction);
    }
  }

  /** The instant a certificate valid from {@code notBefore} to {@code notAfter} is renewed. */
  public Instant renewAt(Instant notBefore, Instant notAfter) {
    long life = Duration.between(notBefore, notAfter).toMillis();
    return notBefore.plusMillis((long) (life * fraction));
  }

  public Instant renewAt(X509Certificate cert) {
    return renewAt(cert.getNotBefore().toInstant(), cert.getNotAfter().toInstant());
  }

  /** Whether {@code cert} should be replaced at {@code now}. */
  public boolean due(X509Certificate cert, Instant now) {
    return !now.isBefore(renewAt(cert));
  }
}
