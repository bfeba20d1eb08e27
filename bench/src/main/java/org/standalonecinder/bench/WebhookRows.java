package org.standalonecinder.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The webhook's rows of the bench table: each figure beside nginx's and the minimal server's. */
final class WebhookRows {

  private WebhookRows() {}

  static void add(
      Table t,
      WebhookBench.Figures nginx,
      WebhookBench.Figures minimal,
      WebhookBench.Figures webhook,
      int connections) {
    String vs = "nginx %s, Vert.x %s";
    t.add(
        "webhook, PVC CREATE (" + connections + " connections): reviews/s",
        Table.perSecond(webhook.pvc().requestsPerSecond()),
        vs.formatted(
            Table.perSecond(nginx.pvc().requestsPerSecond()),
            Table.perSecond(minimal.pvc().requestsPerSecond())),
        webhook.pvc().requestsPerSecond() / nginx.pvc().requestsPerSecond(),
        "≥ 0.5× nginx, ≥ 1.0× Vert.x ("
            + String.format(
                Locale.ROOT,
                "%.2f×",
                webhook.pvc().requestsPerSecond() / minimal.pvc().requestsPerSecond())
            + ")");
    t.add(
        "  p50 / p99",
        Table.ms(webhook.pvc().p50Ms()) + " / " + Table.ms(webhook.pvc().p99Ms()),
        vs.formatted(
            Table.ms(nginx.pvc().p50Ms()) + " / " + Table.ms(nginx.pvc().p99Ms()),
            Table.ms(minimal.pvc().p50Ms()) + " / " + Table.ms(minimal.pvc().p99Ms())),
        webhook.pvc().p99Ms() / nginx.pvc().p99Ms(),
        "p99 ≤ 2 ms");
    if (webhook.cloneReview() != null) {
      // The same claim asking for a clone: the source's lookups and the resolver's answer.
      t.add(
          "webhook, clone CREATE through the resolver: reviews/s",
          Table.perSecond(webhook.cloneReview().requestsPerSecond()),
          "a plain PVC CREATE, above: " + Table.perSecond(webhook.pvc().requestsPerSecond()),
          webhook.cloneReview().requestsPerSecond() / webhook.pvc().requestsPerSecond(),
          "");
      t.add(
          "  p50 / p99",
          Table.ms(webhook.cloneReview().p50Ms()) + " / " + Table.ms(webhook.cloneReview().p99Ms()),
          "a plain PVC CREATE: "
              + Table.ms(webhook.pvc().p50Ms())
              + " / "
              + Table.ms(webhook.pvc().p99Ms()),
          webhook.cloneReview().p99Ms() / webhook.pvc().p99Ms(),
          "");
    }
    t.add(
        "webhook, StorageClass CREATE: reviews/s",
        Table.perSecond(webhook.storageClass().requestsPerSecond()),
        vs.formatted(
            Table.perSecond(nginx.storageClass().requestsPerSecond()),
            Table.perSecond(minimal.storageClass().requestsPerSecond())),
        webhook.storageClass().requestsPerSecond() / nginx.storageClass().requestsPerSecond(),
        "");
    t.add(
        "  p50 / p99",
        Table.ms(webhook.storageClass().p50Ms()) + " / " + Table.ms(webhook.storageClass().p99Ms()),
        "",
        Double.NaN,
        "");
    t.add(
        "webhook, full TLS handshakes/s (one client)",
        Table.perSecond(webhook.handshakes()),
        vs.formatted(Table.perSecond(nginx.handshakes()), Table.perSecond(minimal.handshakes())),
        webhook.handshakes() / nginx.handshakes(),
        "≥ 1.0× nginx");
    t.add(
        "webhook, RSS under load",
        String.format(Locale.ROOT, "%.0f MiB", webhook.rssMib()),
        String.format(
            Locale.ROOT, "nginx %.0f MiB, Vert.x %.0f MiB", nginx.rssMib(), minimal.rssMib()),
        webhook.rssMib() / minimal.rssMib(),
        "≤ 96 MiB");
    t.add(
        "webhook, start to ready",
        Table.ms(webhook.readyMs()),
        String.format(Locale.ROOT, "Vert.x %s", Table.ms(minimal.readyMs())),
        webhook.readyMs() / minimal.readyMs(),
        "≤ 1.0 s");
    List<WebhookBench.Figures> all = new ArrayList<>(List.of(nginx, minimal, webhook));
    for (WebhookBench.Figures f : all) {
      if (f.pvc().errors() + f.storageClass().errors() > 0) {
        t.add(
            "  " + f.name() + ": responses that were not 2xx, or timeouts",
            String.valueOf(f.pvc().errors() + f.storageClass().errors()),
            "",
            Double.NaN,
            "0");
      }
    }
  }
}
