package org.standalonecinder.certs;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The listener and validity bookkeeping that every source shares. */
abstract class AbstractCertificateSource implements CertificateSource {

  private static final Logger LOG = LoggerFactory.getLogger(AbstractCertificateSource.class);

  protected final Clock clock;
  private final List<Consumer<IssuedCertificate>> listeners = new CopyOnWriteArrayList<>();
  private volatile IssuedCertificate current;
  private volatile CaBundle trust;

  AbstractCertificateSource(Clock clock) {
    this.clock = clock;
  }

  @Override
  public IssuedCertificate current() {
    return current;
  }

  @Override
  public CaBundle trust() {
    return trust;
  }

  @Override
  public boolean healthy() {
    IssuedCertificate c = current;
    if (c == null) {
      return false;
    }
    Instant now = clock.instant();
    return !now.isBefore(c.certificate().getNotBefore().toInstant())
        && now.isBefore(c.certificate().getNotAfter().toInstant());
  }

  @Override
  public void onChange(Consumer<IssuedCertificate> listener) {
    listeners.add(listener);
  }

  /** Installs a new certificate and tells every listener; a failing listener is logged. */
  protected void publish(IssuedCertificate next, CaBundle nextTrust) {
    boolean changed = current != null;
    current = next;
    trust = nextTrust;
    if (!changed) {
      return;
    }
    for (Consumer<IssuedCertificate> l : listeners) {
      try {
        l.accept(next);
      } catch (RuntimeException e) {
        LOG.warn("a certificate listener failed: {}", e.getMessage());
      }
    }
  }
}
