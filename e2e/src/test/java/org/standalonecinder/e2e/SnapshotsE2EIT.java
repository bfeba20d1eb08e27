package org.standalonecinder.e2e;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * Snapshots and backups with the real snapshot-controller, API server, Cinder and node ({@link
 * SnapshotCases}) beside the crash drill of the same ({@link SnapshotCrashCases}): the first waits
 * mostly for the node, the second for the snapshot-controller and its own in-process provisioners,
 * on namespaces, classes and provisioner names of its own; run one after the other they were two of
 * the suite's longest classes.
 */
@ExtendWith(Installed.class)
@Order(5)
class SnapshotsE2EIT {

  @Nested
  @Execution(ExecutionMode.CONCURRENT)
  class Snapshots extends SnapshotCases {}

  @Nested
  @Execution(ExecutionMode.CONCURRENT)
  class Crashes extends SnapshotCrashCases {}
}
