package org.standalonecinder.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The README's main job keeps working: the demo runs to its end on the local control plane and the
 * local Cinder.
 */
class DemoIT {

  @Test
  void theDemoRunsToTheEnd() throws Exception {
    assertThat(
            Demo.run(
                Path.of(".."),
                Path.of(
                    System.getProperty("cinder.local.env", "/tmp/cinder-local/cinder-local.env")),
                Path.of(System.getProperty("kube.local.env", "/tmp/kube-local/kube-local.env"))))
        .isTrue();
  }
}
