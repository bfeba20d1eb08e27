package org.standalonecinder.e2e;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * The two nodes at work at once: the kubelet's Pods on the first node ({@link KubeletCases}) and
 * the attach CLI as root in the second ({@link AttachCliCases}). Each node is its own kernel, each
 * case its own claims and volumes, and both mostly wait for their node; run one after the other
 * they were the two longest classes of the suite.
 */
@ExtendWith(Installed.class)
// Before the fault suites, which may leave the installed provisioner stopped.
@Order(2)
class NodesE2EIT {

  @Nested
  @Execution(ExecutionMode.CONCURRENT)
  class Kubelet extends KubeletCases {}

  @Nested
  @Execution(ExecutionMode.CONCURRENT)
  class AttachCli extends AttachCliCases {}
}
