package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.standalonecinder.certs.CaBundle;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.Waits;

/**
 * The webhook's CA rotated while the API server keeps calling it: the webhook runs with a CA of 45
 * s (rotated at 2/3, its certificate re-checked every 2 s) under a steady load of claims; the API
 * server must never meet a certificate it cannot verify, so not one call fails. The API server
 * keeps its connections open under load (their certificate was checked at their handshake), so a
 * second client makes a new handshake every 100 ms trusting only the caBundle it read from the
 * webhook configuration half a second before, as an API server whose informer lags would: the
 * served certificate must verify against it at every moment of the rotation.
 */
@ExtendWith(Installed.class)
@Order(3)
class CaRotationE2EIT {

  private static final String CA_SECRET = "standalone-cinder-webhook-ca";

  @Test
  void theCaRotatesUnderLoadAndNoCallOfTheApiServerFails(LocalInstall it) throws Exception {
    it.kubectl.ok(ClaimLifecycleE2EIT.CLASSES, "apply", "-f", "-");
    String ns = it.namespace("e2e-rotate");
    withNewCa(it, List.of("--ca-validity", "45s"));
    try {
      X509Certificate first = ca(it);
      AtomicBoolean running = new AtomicBoolean(true);
      AtomicInteger ok = new AtomicInteger();
      ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
      List<Thread> load = new ArrayList<>();
      for (int t = 0; t < 3; t++) {
        Thread th =
            new Thread(
                () -> {
                  while (running.get()) {
                    try {
                      it.admin
                          .persistentVolumeClaims()
                          .inNamespace(ns)
                          .resource(claim())
                          .dryRun()
                          .create();
                      ok.incrementAndGet();
                    } catch (RuntimeException e) {
                      failures.add(e.getMessage());
                    }
                  }
                },
                "load-" + t);
        th.start();
        load.add(th);
      }
      ConcurrentLinkedQueue<String> refused = new ConcurrentLinkedQueue<>();
      AtomicInteger handshakes = new AtomicInteger();
      Thread lagging =
          new Thread(
              () -> {
                java.util.ArrayDeque<List<X509Certificate>> seen = new java.util.ArrayDeque<>();
                while (running.get()) {
                  seen.addLast(bundle(it).certificates());
                  // The view of five polls ago: half a second old.
                  List<X509Certificate> view =
                      seen.size() > 5 ? seen.removeFirst() : seen.getFirst();
                  String problem = handshake(view);
                  handshakes.incrementAndGet();
                  if (problem != null) {
                    refused.add(problem);
                  }
                  try {
                    Thread.sleep(100);
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              },
              "lagging-client");
      lagging.start();
      load.add(lagging);
      // Until the Secret holds a new CA and the webhook serves a certificate of it, then a while.
      Waits.await(
          "the new CA's certificate served",
          () -> {
            X509Certificate now = ca(it);
            return !now.equals(first) && signedBy(served(), now);
          },
          Duration.ofSeconds(90));
      // Then reviews and new handshakes across the new CA, counted rather than waited for.
      int reviewsAtRotation = ok.get() + failures.size();
      int handshakesAtRotation = handshakes.get();
      Waits.await(
          "30 reviews and 10 handshakes after the rotation",
          () ->
              ok.get() + failures.size() >= reviewsAtRotation + 30
                  && handshakes.get() >= handshakesAtRotation + 10,
          Duration.ofSeconds(60));
      running.set(false);
      for (Thread th : load) {
        th.join(20_000);
      }
      System.out.printf(
          "CA rotation under load: %d reviews by the API server, %d failed; %d new handshakes"
              + " trusting a bundle half a second old, %d refused%n",
          ok.get(), failures.size(), handshakes.get(), refused.size());
      assertThat(failures).as("calls that failed across the rotation").isEmpty();
      assertThat(refused).as("handshakes a half-second-old caBundle could not verify").isEmpty();
      assertThat(handshakes.get()).isGreaterThan(50);
      assertThat(ok.get()).as("calls made across the rotation").isGreaterThan(100);
      assertThat(
              it.admin.secrets().inNamespace(LocalInstall.NS).withName(CA_SECRET).get().getData())
          .as("the old CA stays trusted until it expires")
          .containsKey("ca-previous.crt");
    } finally {
      // Back to a CA of a year, as installed.
      withNewCa(it, List.of());
    }
  }

  /** The webhook restarted with {@code extra} arguments and a CA it makes anew. */
  private static void withNewCa(LocalInstall it, List<String> extra) throws Exception {
    it.processes.stop("webhook");
    it.admin.secrets().inNamespace(LocalInstall.NS).withName(CA_SECRET).delete();
    Waits.await(
        "the CA Secret gone",
        () -> it.admin.secrets().inNamespace(LocalInstall.NS).withName(CA_SECRET).get() == null,
        Duration.ofSeconds(10));
    it.processes.restart("webhook", extra);
    it.awaitWebhook();
  }

  private static PersistentVolumeClaim claim() {
    return new PersistentVolumeClaimBuilder()
        .withNewMetadata()
        .withGenerateName("load-")
        .endMetadata()
        .withNewSpec()
        .withStorageClassName("e2e-plain")
        .withAccessModes("ReadWriteOnce")
        .withNewResources()
        .addToRequests("storage", new Quantity("1Gi"))
        .endResources()
        .endSpec()
        .build();
  }

  /** The CA in the Secret now. */
  private static X509Certificate ca(LocalInstall it) {
    var s = it.admin.secrets().inNamespace(LocalInstall.NS).withName(CA_SECRET).get();
    return parse(Base64.getDecoder().decode(s.getData().get("tls.crt")));
  }

  /** Our mutating claims webhook's caBundle, as the API server reads it. */
  static CaBundle bundle(LocalInstall it) {
    return CaBundle.fromPem(
        new String(
            Base64.getDecoder()
                .decode(
                    it.admin
                        .admissionRegistration()
                        .v1()
                        .mutatingWebhookConfigurations()
                        .withName("standalone-cinder")
                        .get()
                        .getWebhooks()
                        .get(0)
                        .getClientConfig()
                        .getCaBundle()),
            java.nio.charset.StandardCharsets.US_ASCII));
  }

  /** A new handshake trusting only {@code cas}: null when the served chain verifies. */
  private static String handshake(List<X509Certificate> cas) {
    try {
      SSLContext tls = CaBundle.of(cas).clientContext();
      try (SSLSocket s =
          (SSLSocket) tls.getSocketFactory().createSocket("127.0.0.1", LocalInstall.WEBHOOK_PORT)) {
        s.startHandshake();
        return null;
      }
    } catch (javax.net.ssl.SSLException e) {
      return "refused: " + e.getMessage() + " (trusting " + cas.size() + " CA(s))";
    } catch (Exception e) {
      return "cannot connect: " + e;
    }
  }

  /** The certificate the webhook serves now, as a client sees it in the handshake. */
  private static X509Certificate served() {
    try {
      SSLContext tls = SSLContext.getInstance("TLS");
      // Only to read what is served; whether it verifies is checked against the CA above.
      tls.init(
          null,
          new TrustManager[] {
            new X509TrustManager() {
              @Override
              public void checkClientTrusted(X509Certificate[] chain, String authType) {}

              @Override
              public void checkServerTrusted(X509Certificate[] chain, String authType) {}

              @Override
              public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
              }
            }
          },
          null);
      try (SSLSocket s =
          (SSLSocket) tls.getSocketFactory().createSocket("127.0.0.1", LocalInstall.WEBHOOK_PORT)) {
        s.startHandshake();
        return (X509Certificate) s.getSession().getPeerCertificates()[0];
      }
    } catch (Exception e) {
      throw new AssertionError("cannot read the served certificate", e);
    }
  }

  private static boolean signedBy(X509Certificate c, X509Certificate ca) {
    try {
      c.verify(ca.getPublicKey());
      return true;
    } catch (java.security.GeneralSecurityException e) {
      return false;
    }
  }

  private static X509Certificate parse(byte[] pem) {
    try {
      return (X509Certificate)
          CertificateFactory.getInstance("X.509")
              .generateCertificate(
                  new ByteArrayInputStream(
                      new String(pem, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8)));
    } catch (java.security.cert.CertificateException e) {
      throw new AssertionError(e);
    }
  }
}
