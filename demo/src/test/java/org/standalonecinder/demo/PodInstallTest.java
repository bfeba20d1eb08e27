package org.standalonecinder.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PodInstallTest {

  @TempDir Path dir;

  /** The demo runs the project as Pods only where the node can run them, and says why not. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "no node at all          | none | ''          | webhook provisioner | no node with a kubelet runs",
        "a node without kubelet  | no   | 18443:8443  | webhook provisioner | no node with a kubelet runs",
        "no forward of the port  | yes  | ''          | webhook provisioner | does not forward the webhook's port",
        "another port forwarded  | yes  | 9000:9000   | webhook provisioner | does not forward the webhook's port",
        "an image not built      | yes  | 18443:8443  | webhook             | provisioner.tar is missing",
        "everything there        | yes  | 18443:8443  | webhook provisioner | ''",
      })
  void theDeploymentRunsOnlyWhereTheNodeCanRunIt(
      String row, String kubelet, String forwards, String built, String why) throws Exception {
    Path share = Files.createDirectories(dir.resolve("node/share"));
    Files.writeString(share.resolve("ready"), "");
    Path env = dir.resolve("node-local.env");
    if (!kubelet.equals("none")) {
      Files.writeString(
          env,
          "NODE_LOCAL_SHARE="
              + share
              + "\nNODE_LOCAL_PID="
              + ProcessHandle.current().pid()
              + "\nNODE_LOCAL_KUBELET="
              + kubelet
              + "\nNODE_LOCAL_FORWARDS="
              + forwards
              + "\n");
    }
    Path images = Files.createDirectories(dir.resolve("images"));
    for (String image : built.split(" ")) {
      Files.writeString(images.resolve(image + ".tar"), "");
    }
    LocalNode node = LocalNode.of(env).orElse(null);

    String unfit = PodInstall.unfit(node, env, images);

    if (why.isEmpty()) {
      assertThat(unfit).isEmpty();
    } else {
      assertThat(unfit).contains(why);
    }
  }
}
