package org.standalonecinder.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The README's main job keeps working: the demo runs to its end on the local control plane, the
 * local Cinder and, when one runs with a kubelet (dev/test.sh starts it), the local node.
 */
class DemoIT {

  @Test
  void theDemoRunsToTheEnd() throws Exception {
    assertThat(
            Demo.run(
                Path.of(".."),
                Path.of(
                    System.getProperty("cinder.local.env", "/tmp/cinder-local/cinder-local.env")),
                Path.of(System.getProperty("kube.local.env", "/tmp/kube-local/kube-local.env")),
                Path.of(System.getProperty("node.local.env", "/tmp/node-local/node-local.env"))))
        .isTrue();
  }
}
