package org.standalonecinder.provisioner.cli;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.standalonecinder.provisioner.host.Host;
import org.standalonecinder.provisioner.host.HostConnector;
import org.standalonecinder.provisioner.host.HostException;
import org.standalonecinder.provisioner.host.LocalHost;
import org.standalonecinder.provisioner.node.ClaimResizeCompletion;
import org.standalonecinder.provisioner.node.FilesystemGrower;
import org.standalonecinder.provisioner.node.KubeletMounts;
import org.standalonecinder.provisioner.node.NodeGrowth;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Grows the filesystems of grown PVs that the kubelet mounted on this node, online, and finishes
 * their claims: what the kubelet's in-tree iSCSI and FC plugins do not do after an expansion.
 */
@Command(
    name = "grow-filesystems",
    mixinStandardHelpOptions = true,
    description = {
      "Grow, online, the filesystems the kubelet mounted on this node for Pods from iSCSI, FC and"
          + " RBD PVs: rescan each device so the kernel sees its new size, then resize2fs (ext2/3/4)"
          + " or xfs_growfs (xfs). A filesystem that fills its device already is left as it is."
          + " Raw block volumes (volumeMode: Block) are rescanned: their Pods see the new size.",
      "With --kubeconfig (the node's own credentials, the kubelet's), the claims whose status says"
          + " FileSystemResizePending are finished: their capacity becomes their PV's.",
      "Needs root. Once, or with --every as the node component does."
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:every filesystem asked for fills its device (and its claim is finished)",
      "2:a setting is invalid",
      "6:a filesystem could not be grown or its claim finished (not root, a tool missing, a"
          + " partition, another filesystem, the API server refused)",
      "7:a PV asked for is not mounted for a Pod on this node"
    })
final class GrowCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(
      names = {"--pv"},
      paramLabel = "NAME",
      description = "a PV to grow (repeatable; default: every iSCSI, FC and RBD PV mounted here)")
  List<String> pvs = new ArrayList<>();

  @Option(
      names = {"--kubeconfig"},
      paramLabel = "FILE",
      description =
          "the node's credentials (the kubelet's kubeconfig): finish the claims of the grown"
              + " filesystems; without it only the filesystems grow")
  Path kubeconfig;

  @Option(
      names = {"--every"},
      paramLabel = "DURATION",
      description =
          "run until stopped, a pass every DURATION (e.g. PT30S: ISO-8601), instead of once;"
              + " a pass rescans this node's devices and asks the API server nothing unless one"
              + " grew")
  Duration every;

  @Option(
      names = {"--mountinfo"},
      paramLabel = "FILE",
      defaultValue = "/proc/1/mountinfo",
      description =
          "the host's mount table: pid 1's, where the kubelet's mounts are (default: ${DEFAULT-VALUE};"
              + " in a container, the host's /proc mounted elsewhere)")
  Path mountinfo;

  @Option(
      names = {"--kubelet-dir"},
      paramLabel = "DIR",
      defaultValue = "/var/lib/kubelet",
      description =
          "the kubelet's --root-dir, where it links Pods' raw block volumes (default:"
              + " ${DEFAULT-VALUE})")
  Path kubeletDir;

  @Override
  public Integer call() throws Exception {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    if (every != null && every.toMillis() < 1000) {
      err.println("--every must be at least one second, not " + every);
      return CheckCommand.BAD_CONFIG;
    }
    Host host = LocalHost.machine();
    if (!host.privileged()) {
      err.println("grow-filesystems needs root: it rescans devices and grows mounted filesystems");
      return AttachCommand.HOST;
    }
    KubernetesClient client = null;
    try {
      ClaimResizeCompletion completion = null;
      if (kubeconfig != null) {
        Config config =
            Config.fromKubeconfig(null, Files.readString(kubeconfig), kubeconfig.toString());
        client = new KubernetesClientBuilder().withConfig(config).build();
        completion = new ClaimResizeCompletion(client, HostConnector.hostName(), Clock.systemUTC());
      }
      NodeGrowth growth =
          new NodeGrowth(
              this::readMounts,
              () -> KubeletMounts.devices(kubeletDir),
              FilesystemGrower.machine(host),
              completion,
              line -> {
                out.println(line);
                out.flush();
              },
              every == null);
      if (every == null) {
        NodeGrowth.Pass pass = growth.pass(pvs);
        pass.notMounted().forEach(pv -> err.println(pv + ": not mounted for a Pod on this node"));
        return !pass.notMounted().isEmpty()
            ? AttachCommand.VOLUME
            : pass.failed() > 0 ? AttachCommand.HOST : CheckCommand.OK;
      }
      while (!Thread.currentThread().isInterrupted()) {
        growth.pass(pvs);
        Thread.sleep(every.toMillis());
      }
      return CheckCommand.OK;
    } catch (IOException e) {
      err.println("cannot read " + kubeconfig + ": " + e.getMessage());
      return CheckCommand.BAD_CONFIG;
    } catch (HostException e) {
      err.println(e.getMessage());
      return AttachCommand.HOST;
    } finally {
      if (client != null) {
        client.close();
      }
    }
  }

  private String readMounts() {
    try {
      return Files.readString(mountinfo);
    } catch (IOException e) {
      throw new HostException(
          "cannot read the mount table " + mountinfo + ": " + e.getMessage(), e);
    }
  }
}
