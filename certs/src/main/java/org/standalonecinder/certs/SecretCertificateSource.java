package org.standalonecinder.certs;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serving certificates from the CA kept in a Secret ({@link SecretCaStore}): every replica serves
 * certificates of one CA, renewed at the policy's point, and a rotated CA (by this replica or
 * another) is picked up at the next {@link #refresh()}. The trust bundle goes to {@code
 * trustChanged} (the caBundle injection) one refresh before any certificate of a new CA is served:
 * the API server reads webhook configurations through an informer, so a bundle written a moment ago
 * may not be in use yet, and it must never meet a certificate it cannot verify. The old CA's
 * certificate, still valid (rotation comes at 2/3 of the CA's life), is served meanwhile.
 */
public final class SecretCertificateSource extends AbstractCertificateSource {

  private static final Logger LOG = LoggerFactory.getLogger(SecretCertificateSource.class);

  private final SecretCaStore store;
  private final List<String> dnsNames;
  private final List<String> ipAddresses;
  private final Duration validity;
  private final RenewalPolicy policy;
  private final Consumer<CaBundle> trustChanged;
  private String publishedTrust;

  /**
   * Loads (or creates) the CA and issues the first certificate.
   *
   * @param trustChanged called with each new trust bundle; when it throws, the bundle is offered
   *     again at the next refresh and the certificate of a new CA is not served meanwhile
   */
  public SecretCertificateSource(
      SecretCaStore store,
      List<String> dnsNames,
      List<String> ipAddresses,
      Duration validity,
      RenewalPolicy policy,
      Consumer<CaBundle> trustChanged,
      Clock clock) {
    super(clock);
    this.store = store;
    this.dnsNames = List.copyOf(dnsNames);
    this.ipAddresses = List.copyOf(ipAddresses);
    this.validity = validity;
    this.policy = policy;
    this.trustChanged = trustChanged;
    SecretCaStore.Loaded loaded = store.loadOrCreate();
    // At start the certificate is served even if the injection fails: an API server that already
    // trusts this CA (a restart) keeps working, and the injection is retried at each refresh.
    offerTrust(loaded.trust());
    publish(issue(loaded.ca()), loaded.trust());
  }

  @Override
  public synchronized void refresh() {
    SecretCaStore.Loaded loaded = store.loadOrCreate();
    Trust trust = offerTrust(loaded.trust());
    boolean newCa = !loaded.ca().signed(current().certificate());
    if (newCa && trust != Trust.IN_USE) {
      return; // not published yet, or only now: the new CA's certificate waits a refresh
    }
    if (newCa || policy.due(current().certificate(), clock.instant())) {
      IssuedCertificate next = issue(loaded.ca());
      LOG.info(
          "issued a serving certificate{}; valid until {}",
          newCa ? " of the new CA" : "",
          next.certificate().getNotAfter().toInstant());
      publish(next, loaded.trust());
    }
  }

  /** Where a trust bundle is. */
  private enum Trust {
    /** Published at an earlier refresh: the API server has had a refresh interval to read it. */
    IN_USE,
    /** Published just now. */
    PUBLISHED,
    /** Could not be published; offered again at the next refresh. */
    FAILED
  }

  private Trust offerTrust(CaBundle trust) {
    String pem = trust.pem();
    if (pem.equals(publishedTrust)) {
      return Trust.IN_USE;
    }
    try {
      trustChanged.accept(trust);
      publishedTrust = pem;
      return Trust.PUBLISHED;
    } catch (RuntimeException e) {
      LOG.warn("could not publish the CA bundle, will retry: {}", e.getMessage());
      return Trust.FAILED;
    }
  }

  private IssuedCertificate issue(CertificateAuthority ca) {
    return ca.issueServing(dnsNames, ipAddresses, validity, clock);
  }

  @Override
  public void close() {}
}
