package org.standalonecinder.e2e;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.standalonecinder.demo.LocalInstall;

/**
 * What waits on the nodes and the snapshot-controller stand-in, all at once: the kubelet's Pods on
 * the first node and a ReadWriteMany claim on both ({@link KubeletCases}), the attach CLI as root
 * in the second ({@link AttachCliCases}), snapshots and backups restored into Pods on the first
 * node ({@link SnapshotCases}) and the crash drill of the same ({@link SnapshotCrashCases},
 * in-process provisioners of its own). Each case has its own namespace, claims and volumes; each
 * node is its own kernel. Run one after the other they were the suite's longest classes, and they
 * spend their time waiting: for a node's kernel, or for the snapshot-controller stand-in, which
 * looks at a failed snapshot again after 1 s, doubling up to 5 minutes, as the real one does.
 */
@ExtendWith(Installed.class)
// Before the fault suites, which may leave the installed provisioner stopped, and beside nothing
// else: run beside the other classes, the snapshot cases met InstallDocsE2EIT's clean-up, which
// takes the installation's RBAC away.
@Order(2)
class NodesE2EIT {

  /**
   * The classes every nested class uses, made once before they start: two {@code kubectl apply}s at
   * once of an object not yet there both create it, and one fails.
   */
  @BeforeAll
  static void theirClasses(LocalInstall it) {
    it.kubectl.ok(ClaimLifecycleE2EIT.CLASSES, "apply", "-f", "-");
    it.kubectl.ok(ClaimLifecycleE2EIT.CEPH_CLASSES, "apply", "-f", "-");
    it.kubectl.ok(SnapshotCases.CLASSES, "apply", "-f", "-");
  }

  @Nested
  @Execution(ExecutionMode.CONCURRENT)
  class Kubelet extends KubeletCases {}

  @Nested
  @Execution(ExecutionMode.CONCURRENT)
  class AttachCli extends AttachCliCases {}

  @Nested
  @Execution(ExecutionMode.CONCURRENT)
  class Snapshots extends SnapshotCases {}

  @Nested
  @Execution(ExecutionMode.CONCURRENT)
  class SnapshotCrashes extends SnapshotCrashCases {}
}
