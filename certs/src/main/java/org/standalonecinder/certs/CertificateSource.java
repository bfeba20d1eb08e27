package org.standalonecinder.certs;

import java.util.function.Consumer;

/**
 * Where a TLS server gets its certificate: the current one, whether it is usable, and a
 * notification when it changes, so that the server swaps it in place without a restart.
 */
public interface CertificateSource extends AutoCloseable {

  /** The certificate to serve now. */
  IssuedCertificate current();

  /** The CAs clients should trust for it (a webhook configuration's caBundle). */
  CaBundle trust();

  /** Whether {@link #current()} is within its validity now: readiness follows this. */
  boolean healthy();

  /** Called with each new certificate, on the thread that noticed the change. */
  void onChange(Consumer<IssuedCertificate> listener);

  /** Looks for a change now (renewal due, files replaced); sources also do it periodically. */
  void refresh();

  @Override
  void close();
}
