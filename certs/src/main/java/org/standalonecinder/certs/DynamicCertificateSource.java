package org.standalonecinder.certs;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serving certificates issued by our own CA and renewed at the policy's point (two thirds of their
 * life by default). {@link #refresh()} checks; the owner calls it periodically (the webhook every
 * minute), tests with a moved clock.
 */
public final class DynamicCertificateSource extends AbstractCertificateSource {

  private static final Logger LOG = LoggerFactory.getLogger(DynamicCertificateSource.class);

  private final CertificateAuthority ca;
  private final List<String> dnsNames;
  private final List<String> ipAddresses;
  private final Duration validity;
  private final RenewalPolicy policy;

  public DynamicCertificateSource(
      CertificateAuthority ca,
      List<String> dnsNames,
      List<String> ipAddresses,
      Duration validity,
      RenewalPolicy policy,
      Clock clock) {
    super(clock);
    this.ca = ca;
    this.dnsNames = List.copyOf(dnsNames);
    this.ipAddresses = List.copyOf(ipAddresses);
    this.validity = validity;
    this.policy = policy;
    publish(issue(), CaBundle.of(List.of(ca.certificate())));
  }

  private IssuedCertificate issue() {
    return ca.issueServing(dnsNames, ipAddresses, validity, clock);
  }

  @Override
  public void refresh() {
    if (policy.due(current().certificate(), clock.instant())) {
      IssuedCertificate next = issue();
      LOG.info(
          "renewed the serving certificate; the new one is valid until {}",
          next.certificate().getNotAfter().toInstant());
      publish(next, trust());
    }
  }

  @Override
  public void close() {}
}
