package org.standalonecinder.bench;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;

/**
 * The webhook while a flood hits its port: {@code connections} TLS connections from eight loopback
 * addresses other than the API server's (pods of their own), each declaring a 3 MiB body and
 * sending it, half of them holding the last byte for five seconds. Meanwhile reviews of a claim
 * come one after another from 127.0.0.1 over one HTTP/2 connection opened before the flood, as an
 * API server keeps its own. Baseline: the same reviews, from the same process, just before the
 * flood. Also the peak RSS (sampled every 100 ms) beside the Pod's limit, and what was turned away.
 */
final class WebhookFloodBench {

  static final int BODY = 3 * 1024 * 1024;
  static final Duration HOLD = Duration.ofSeconds(5);
  static final int ADDRESSES = 8;

  /** The Pod's memory limit (manifests/base). */
  static final double LIMIT_MIB = 256;

  private WebhookFloodBench() {}

  /**
   * @param quiet a review's latencies before the flood, ms
   * @param flooded the same during it, ms
   * @param peakRssMib the largest RSS from the start of the flood to its end
   * @param tooBusy flood requests answered 429
   * @param cutOff flood connections closed or reset before an answer
   */
  record Figures(
      List<Double> quiet, List<Double> flooded, double peakRssMib, long tooBusy, long cutOff) {}

  static Figures measure(List<String> cmd, int port, Path dir, int connections, int reviews)
      throws Exception {
    SSLContext tls = BenchNet.trustAll();
    ProcessBuilder pb =
        new ProcessBuilder(Tools.pinned(0, cmd))
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("webhook-flood.log").toFile());
    pb.environment().put("MALLOC_ARENA_MAX", "2"); // as images/Dockerfile runs it
    Process p = pb.start();
    try {
      ProvisionerBench.await(
          "webhook ready for the flood",
          () -> BenchNet.handshake(tls, port),
          Duration.ofSeconds(60));
      HttpClient api =
          HttpClient.newBuilder().sslContext(tls).version(HttpClient.Version.HTTP_2).build();
      HttpRequest review =
          HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + "/validate"))
              .header("Content-Type", "application/json")
              .timeout(Duration.ofSeconds(30))
              .POST(HttpRequest.BodyPublishers.ofFile(dir.resolve("pvc.json")))
              .build();
      reviews(api, review, reviews); // warm-up
      List<Double> quiet = reviews(api, review, reviews);

      AtomicLong peak = new AtomicLong();
      Thread sampler = sampleRss(p.pid(), peak);
      LongAdder tooBusy = new LongAdder();
      LongAdder cutOff = new LongAdder();
      byte[] body = body();
      List<Thread> flood = new ArrayList<>();
      for (int i = 0; i < connections; i++) {
        String from = "127.0.0." + (2 + i % ADDRESSES);
        boolean slow = i % 2 == 0;
        Thread t =
            new Thread(
                null,
                () -> {
                  String outcome = send(tls, port, from, body, slow);
                  if (outcome.equals("429")) {
                    tooBusy.increment();
                  } else if (outcome.equals("cut")) {
                    cutOff.increment();
                  }
                },
                "flood-" + i,
                256 * 1024);
        t.setDaemon(true);
        t.start();
        flood.add(t);
      }
      // One review every 50 ms for as long as the flood lasts, as an API server's come.
      List<Double> flooded = new ArrayList<>();
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
      while (flood.stream().anyMatch(Thread::isAlive) && System.nanoTime() < until) {
        flooded.addAll(reviews(api, review, 1));
        Thread.sleep(50);
      }
      sampler.interrupt();
      sampler.join();
      if (!p.isAlive()) {
        throw new IllegalStateException(
            "the webhook died in the flood; see " + dir.resolve("webhook-flood.log"));
      }
      Figures f = new Figures(quiet, flooded, peak.get() / 1024.0, tooBusy.sum(), cutOff.sum());
      System.err.printf(
          Locale.ROOT,
          "webhook flood (%d connections): a review p50 %.1f / p99 %.1f ms (before: %.1f / %.1f);"
              + " peak RSS %.0f MiB; %d answered 429, %d cut off%n",
          connections,
          Stats.percentile(flooded, 50),
          Stats.percentile(flooded, 99),
          Stats.percentile(quiet, 50),
          Stats.percentile(quiet, 99),
          f.peakRssMib(),
          f.tooBusy(),
          f.cutOff());
      return f;
    } finally {
      p.destroy();
      p.waitFor();
    }
  }

  static void rows(Table t, Figures f, int connections, double rssUnderLoadMib) {
    double p99 = Stats.percentile(f.flooded(), 99);
    double quiet99 = Stats.percentile(f.quiet(), 99);
    t.add(
        "webhook under a flood of "
            + connections
            + " connections × 3 MiB: a review's p50 / p99 (one every 50 ms, "
            + f.flooded().size()
            + ")",
        Table.ms(Stats.percentile(f.flooded(), 50)) + " / " + Table.ms(p99),
        "before the flood: "
            + Table.ms(Stats.percentile(f.quiet(), 50))
            + " / "
            + Table.ms(quiet99),
        p99 / quiet99,
        "p99 ≤ 1 s (the API server waits 10 s)");
    t.add(
        "  peak RSS in the flood",
        String.format(Locale.ROOT, "%.0f MiB", f.peakRssMib()),
        String.format(Locale.ROOT, "under wrk's load: %.0f MiB", rssUnderLoadMib),
        f.peakRssMib() / rssUnderLoadMib,
        String.format(Locale.ROOT, "< %.0f MiB (the Pod's limit)", LIMIT_MIB));
    t.add(
        "  the flood turned away",
        f.tooBusy() + " answered 429, " + f.cutOff() + " closed",
        "",
        Double.NaN,
        "");
  }

  private static List<Double> reviews(HttpClient api, HttpRequest review, int n)
      throws IOException, InterruptedException {
    List<Double> ms = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      long t0 = System.nanoTime();
      HttpResponse<String> r = api.send(review, HttpResponse.BodyHandlers.ofString());
      ms.add((System.nanoTime() - t0) / 1e6);
      if (r.statusCode() != 200) {
        throw new IllegalStateException(
            "the API server's review got " + r.statusCode() + ": " + r.body());
      }
    }
    return ms;
  }

  private static Thread sampleRss(long pid, AtomicLong peakKib) {
    Thread t =
        new Thread(
            () -> {
              while (!Thread.currentThread().isInterrupted()) {
                try {
                  long kib = (long) (Tools.rssMib(pid) * 1024);
                  peakKib.accumulateAndGet(kib, Math::max);
                  Thread.sleep(100);
                } catch (InterruptedException e) {
                  return;
                } catch (IOException e) {
                  return; // the process is gone: said after the flood
                }
              }
            },
            "rss-sampler");
    t.setDaemon(true);
    t.start();
    return t;
  }

  /** A review of a claim padded by one annotation to the largest body the API server sends. */
  static byte[] body() {
    String head =
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
            + "\"uid\":\"flood\",\"kind\":{\"group\":\"\",\"version\":\"v1\","
            + "\"kind\":\"PersistentVolumeClaim\"},\"namespace\":\"flood\",\"operation\":\"CREATE\","
            + "\"userInfo\":{\"username\":\"flood\"},\"object\":{\"metadata\":{\"name\":\"f\","
            + "\"annotations\":{\"pad\":\"";
    byte[] h = head.getBytes(StandardCharsets.US_ASCII);
    byte[] tail = "\"}}}}}".getBytes(StandardCharsets.US_ASCII);
    byte[] out = new byte[BODY];
    System.arraycopy(h, 0, out, 0, h.length);
    java.util.Arrays.fill(out, h.length, BODY - tail.length, (byte) 'a');
    System.arraycopy(tail, 0, out, BODY - tail.length, tail.length);
    return out;
  }

  /** One flood request; the status it got, or "cut" when its connection ended first. */
  private static String send(SSLContext tls, int port, String from, byte[] body, boolean slow) {
    try (SSLSocket s =
        (SSLSocket)
            tls.getSocketFactory()
                .createSocket(
                    InetAddress.getByName("127.0.0.1"), port, InetAddress.getByName(from), 0)) {
      s.setSoTimeout(60_000);
      OutputStream out = s.getOutputStream();
      out.write(
          ("POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  + "Content-Length: "
                  + body.length
                  + "\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.write(body, 0, body.length - 1);
      out.flush();
      if (slow) {
        Thread.sleep(HOLD.toMillis());
      }
      out.write(body, body.length - 1, 1);
      out.flush();
      byte[] status = new byte[12];
      int n = s.getInputStream().readNBytes(status, 0, 12);
      return n < 12 ? "cut" : new String(status, 9, 3, StandardCharsets.US_ASCII);
    } catch (IOException e) {
      return "cut";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "cut";
    }
  }
}
