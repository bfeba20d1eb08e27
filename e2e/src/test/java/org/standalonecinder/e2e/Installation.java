package org.standalonecinder.e2e;

import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.e2e.standin.Rule;
import org.standalonecinder.e2e.standin.SnapshotControllerStandIn;

/**
 * The suite's one {@link LocalInstall} (the same installation the demo runs on), closed with the
 * run: its processes stopped, its logs left in {@code e2e/target/e2e/logs}. Where the control plane
 * serves the snapshot API, the {@link SnapshotControllerStandIn} runs beside it for the whole run.
 */
final class Installation implements ExtensionContext.Store.CloseableResource {

  final LocalInstall install;

  /** The run's snapshot-controller stand-in, or null without the snapshot API. */
  static volatile SnapshotControllerStandIn snapshotStandIn;

  Installation() throws Exception {
    install =
        new LocalInstall(
            Path.of(System.getProperty("project.root", "..")),
            Path.of(System.getProperty("e2e.work", "target/e2e")),
            Path.of(System.getProperty("kube.local.env", "/tmp/kube-local/kube-local.env")),
            Path.of(System.getProperty("cinder.local.env", "/tmp/cinder-local/cinder-local.env")),
            "e2e-" + UUID.randomUUID().toString().substring(0, 8));
    if ("1".equals(install.kubeEnv.get("KUBE_LOCAL_SNAPSHOTS"))) {
      try {
        snapshotStandIn =
            SnapshotControllerStandIn.start(
                install.admin,
                Rule.parse(System.getProperty("standin.rules.off")),
                Duration.ofSeconds(60));
      } catch (RuntimeException e) {
        install.close();
        throw e;
      }
    }
  }

  @Override
  public void close() {
    SnapshotControllerStandIn s = snapshotStandIn;
    if (s != null) {
      s.close();
      snapshotStandIn = null;
    }
    install.close();
  }
}
