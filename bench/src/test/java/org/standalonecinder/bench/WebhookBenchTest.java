package org.standalonecinder.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class WebhookBenchTest {

  @Test
  void jvmOptionsAreTheLinesThatAreNeitherCommentsNorBlank() {
    assertThat(
            WebhookBench.parseJvmOptions(
                "# sized for a sidecar\n-Xmx64m\n\n  -XX:+UseSerialGC  \n# -Xss1m\n-Dx=a b\n"))
        .containsExactly("-Xmx64m", "-XX:+UseSerialGC", "-Dx=a b");
  }

  @Test
  void theImagesOptionsFileParsesAndCapsTheHeap() throws Exception {
    // The bench measures what the image runs: the file it reads is the image's.
    List<String> options =
        WebhookBench.jvmOptions(Path.of("../images/jvm/webhook.options").toAbsolutePath());
    assertThat(options).contains("-Xmx64m").allMatch(o -> o.startsWith("-"));
  }

  @Test
  void eachFigureIsTheMedianOfItsRoundsAndErrorsAddUp() {
    WebhookBench.Figures f =
        WebhookBench.median(
            List.of(
                figures(900, 10_000, 1.0, 5.0, 2, 300, 120),
                figures(1100, 30_000, 3.0, 9.0, 0, 500, 100),
                figures(1000, 20_000, 2.0, 7.0, 1, 400, 140)));
    assertThat(f.readyMs()).isEqualTo(1000);
    assertThat(f.pvc().requestsPerSecond()).isEqualTo(20_000);
    assertThat(f.pvc().p50Ms()).isEqualTo(2.0);
    assertThat(f.pvc().p99Ms()).isEqualTo(7.0);
    assertThat(f.pvc().errors()).isEqualTo(3);
    assertThat(f.handshakes()).isEqualTo(400);
    assertThat(f.rssMib()).isEqualTo(120);
    assertThat(f.cloneReview().requestsPerSecond()).isEqualTo(20_000);
  }

  @Test
  void aServerSentNoClonesHasNoCloneFigures() {
    Tools.Load load = new Tools.Load(1, 1, 1, 0);
    WebhookBench.Figures nginx = new WebhookBench.Figures("nginx", 1, load, load, 1, 1, null);
    assertThat(WebhookBench.median(List.of(nginx, nginx)).cloneReview()).isNull();
  }

  private static WebhookBench.Figures figures(
      double ready, double rps, double p50, double p99, long errors, double hs, double rss) {
    Tools.Load load = new Tools.Load(rps, p50, p99, errors);
    return new WebhookBench.Figures("webhook", ready, load, load, hs, rss, load);
  }
}
