package org.standalonecinder.e2e;

import java.nio.file.Path;
import java.util.UUID;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.standalonecinder.demo.LocalInstall;

/**
 * The suite's one {@link LocalInstall} (the same installation the demo runs on), closed with the
 * run: its processes stopped, its logs left in {@code e2e/target/e2e/logs}.
 */
final class Installation implements ExtensionContext.Store.CloseableResource {

  final LocalInstall install;

  Installation() throws Exception {
    install =
        new LocalInstall(
            Path.of(System.getProperty("project.root", "..")),
            Path.of(System.getProperty("e2e.work", "target/e2e")),
            Path.of(System.getProperty("kube.local.env", "/tmp/kube-local/kube-local.env")),
            Path.of(System.getProperty("cinder.local.env", "/tmp/cinder-local/cinder-local.env")),
            "e2e-" + UUID.randomUUID().toString().substring(0, 8));
  }

  @Override
  public void close() {
    install.close();
  }
}
