package org.standalonecinder.provisioner.snapshot;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.function.IntSupplier;

/**
 * The snapshot loop's work: {@code
 * standalone_cinder_snapshots_total{operation=take|backup|import|delete,
 * result=succeeded|failed|refused}} (succeeded: the snapshot ready, or gone; failed: retried;
 * refused: a final failure, such as a volume of another cluster), contents made for dynamic
 * snapshots ({@code standalone_cinder_snapshot_contents_made_total}), the Cinder snapshots the
 * sweep deleted ({@code standalone_cinder_snapshots_swept_total}) and the queue's depth.
 */
final class SnapshotMetrics {

  static final String TAKE = "take";
  static final String BACKUP = "backup";
  static final String IMPORT = "import";
  static final String DELETE = "delete";

  private final MeterRegistry registry;
  private final Counter made;
  private final Counter swept;

  SnapshotMetrics(MeterRegistry registry) {
    this.registry = registry;
    this.made =
        Counter.builder("standalone_cinder_snapshot_contents_made")
            .description(
                "VolumeSnapshotContents made for dynamic snapshots of this provisioner's claims")
            .register(registry);
    this.swept =
        Counter.builder("standalone_cinder_snapshots_swept")
            .description(
                "Cinder snapshots and backups deleted by the sweep (their content gone under Delete)")
            .register(registry);
    // Every series from the start, at 0.
    for (String op : new String[] {TAKE, BACKUP, IMPORT, DELETE}) {
      for (String result : new String[] {"succeeded", "failed", "refused"}) {
        counter(op, result);
      }
    }
  }

  private Counter counter(String operation, String result) {
    return Counter.builder("standalone_cinder_snapshots")
        .description("snapshot operations by result")
        .tags("operation", operation, "result", result)
        .register(registry);
  }

  void queue(IntSupplier depth) {
    Gauge.builder("standalone_cinder_snapshot_queue_depth", depth::getAsInt)
        .description("VolumeSnapshots and contents waiting for a snapshot worker")
        .register(registry);
  }

  void succeeded(String operation) {
    counter(operation, "succeeded").increment();
  }

  void failed(String operation, boolean isFinal) {
    counter(operation, isFinal ? "refused" : "failed").increment();
  }

  void contentMade() {
    made.increment();
  }

  void swept() {
    swept.increment();
  }
}
