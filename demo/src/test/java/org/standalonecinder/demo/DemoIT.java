package org.standalonecinder.demo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The README's main job keeps working: the demo runs to its end on the local control plane, the
 * local Cinder and, when one runs with a kubelet (dev/test.sh starts it), the local node; and what
 * it prints is what it made, not what else the cluster holds (a Released PV of another run).
 */
class DemoIT {

  private static final String STRAY = "pv-left-by-another-run";

  @Test
  void theDemoRunsToTheEndAndShowsOnlyWhatItMade() throws Exception {
    Path kubeEnv = Path.of(System.getProperty("kube.local.env", "/tmp/kube-local/kube-local.env"));
    Map<String, String> kube = LocalInstall.env(kubeEnv);
    Kubectl kubectl =
        new Kubectl(
            kube.get("KUBE_LOCAL_KUBECTL"),
            Path.of(kube.get("KUBE_LOCAL_KUBECONFIG")),
            Files.createTempDirectory("demo-it"));
    kubectl.ok(
        """
        apiVersion: v1
        kind: PersistentVolume
        metadata: {name: %s}
        spec:
          capacity: {storage: 1Gi}
          accessModes: [ReadWriteOnce]
          persistentVolumeReclaimPolicy: Retain
          storageClassName: demo-it-other
          hostPath: {path: /nonexistent}
          claimRef: {namespace: default, name: gone, uid: 00000000-0000-0000-0000-000000000001}
        """
            .formatted(STRAY),
        "apply",
        "-f",
        "-");
    PrintStream console = System.out;
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    boolean ran;
    try {
      System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
      ran =
          Demo.run(
              Path.of(".."),
              Path.of(System.getProperty("cinder.local.env", "/tmp/cinder-local/cinder-local.env")),
              kubeEnv,
              Path.of(System.getProperty("node.local.env", "/tmp/node-local/node-local.env")),
              null);
    } finally {
      System.setOut(console);
      console.print(printed.toString(StandardCharsets.UTF_8));
      kubectl.run(null, "delete", "pv", STRAY, "--wait=false");
    }
    assertThat(ran).isTrue();
    assertThat(printed.toString(StandardCharsets.UTF_8))
        .contains("claim default/data Bound")
        .doesNotContain(STRAY);
  }
}
