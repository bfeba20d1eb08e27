package org.standalonecinder.provisioner.cinder;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Every Cinder call of the provisioner, counted and timed: {@code
 * standalone_cinder_cinder_request_seconds{operation, outcome}} with a latency histogram. The
 * outcome is {@code ok} or the failure's kind ({@code not_found}, {@code unavailable}, {@code
 * quota_exceeded}, ...): few values, so the series stay few. The waits ({@code await*}) are timed
 * whole, polls included.
 */
public final class MeteredCinderClient implements CinderClient {

  static final String METRIC = "standalone_cinder_cinder_request_seconds";

  private final CinderClient cinder;
  private final MeterRegistry registry;

  public MeteredCinderClient(CinderClient cinder, MeterRegistry registry) {
    this.cinder = cinder;
    this.registry = registry;
  }

  /** The outcome tag of a failure: its kind in snake case, {@code error} for anything else. */
  static String outcome(RuntimeException e) {
    if (e instanceof CinderException) {
      return e.getClass()
          .getSimpleName()
          .replaceAll("([a-z])([A-Z])", "$1_$2")
          .toLowerCase(Locale.ROOT);
    }
    return "error";
  }

  private <T> T timed(String operation, Supplier<T> call) {
    long start = System.nanoTime();
    String outcome = "ok";
    try {
      return call.get();
    } catch (RuntimeException e) {
      outcome = outcome(e);
      throw e;
    } finally {
      Timer.builder(METRIC)
          .description("Cinder calls by operation and outcome")
          .tags("operation", operation, "outcome", outcome)
          .publishPercentileHistogram()
          .register(registry)
          .record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
    }
  }

  private void timed(String operation, Runnable call) {
    timed(
        operation,
        () -> {
          call.run();
          return null;
        });
  }

  @Override
  public ApiVersions apiVersions() {
    // Asked once and then remembered by the adapter; not a request worth a series.
    return cinder.apiVersions();
  }

  @Override
  public Volume createVolume(VolumeSpec spec) {
    return timed("createVolume", () -> cinder.createVolume(spec));
  }

  @Override
  public Optional<Volume> getVolume(String volumeId) {
    return timed("getVolume", () -> cinder.getVolume(volumeId));
  }

  @Override
  public List<Volume> findVolumes(String name, Map<String, String> metadata) {
    return timed("findVolumes", () -> cinder.findVolumes(name, metadata));
  }

  @Override
  public Volume awaitVolumeStatus(String volumeId, Set<String> wanted, Backoff backoff) {
    return timed("awaitVolumeStatus", () -> cinder.awaitVolumeStatus(volumeId, wanted, backoff));
  }

  @Override
  public void awaitVolumeDeleted(String volumeId, Backoff backoff) {
    timed("awaitVolumeDeleted", () -> cinder.awaitVolumeDeleted(volumeId, backoff));
  }

  @Override
  public void updateVolumeMetadata(String volumeId, Map<String, String> metadata) {
    timed("updateVolumeMetadata", () -> cinder.updateVolumeMetadata(volumeId, metadata));
  }

  @Override
  public void deleteVolume(String volumeId) {
    timed("deleteVolume", () -> cinder.deleteVolume(volumeId));
  }

  @Override
  public void extendVolume(String volumeId, int newSizeGib) {
    timed("extendVolume", () -> cinder.extendVolume(volumeId, newSizeGib));
  }

  @Override
  public void reserve(String volumeId) {
    timed("reserve", () -> cinder.reserve(volumeId));
  }

  @Override
  public void unreserve(String volumeId) {
    timed("unreserve", () -> cinder.unreserve(volumeId));
  }

  @Override
  public void resetToAvailable(String volumeId) {
    timed("resetToAvailable", () -> cinder.resetToAvailable(volumeId));
  }

  @Override
  public ConnectionInfo initializeConnection(String volumeId, Connector connector) {
    return timed("initializeConnection", () -> cinder.initializeConnection(volumeId, connector));
  }

  @Override
  public void terminateConnection(String volumeId, Connector connector) {
    timed("terminateConnection", () -> cinder.terminateConnection(volumeId, connector));
  }

  @Override
  public Attachment createAttachment(String volumeId, Connector connector, boolean readOnly) {
    return timed("createAttachment", () -> cinder.createAttachment(volumeId, connector, readOnly));
  }

  @Override
  public Optional<Attachment> getAttachment(String attachmentId) {
    return timed("getAttachment", () -> cinder.getAttachment(attachmentId));
  }

  @Override
  public void markAttached(String volumeId, String hostName, String mountpoint, boolean readOnly) {
    timed("markAttached", () -> cinder.markAttached(volumeId, hostName, mountpoint, readOnly));
  }

  @Override
  public void markDetached(String volumeId, String attachmentId) {
    timed("markDetached", () -> cinder.markDetached(volumeId, attachmentId));
  }

  @Override
  public List<Attachment> listAttachments(String volumeId) {
    return timed("listAttachments", () -> cinder.listAttachments(volumeId));
  }

  @Override
  public void completeAttachment(String attachmentId) {
    timed("completeAttachment", () -> cinder.completeAttachment(attachmentId));
  }

  @Override
  public void deleteAttachment(String attachmentId) {
    timed("deleteAttachment", () -> cinder.deleteAttachment(attachmentId));
  }

  @Override
  public Snapshot createSnapshot(String volumeId, String name, Map<String, String> metadata) {
    return timed("createSnapshot", () -> cinder.createSnapshot(volumeId, name, metadata));
  }

  @Override
  public Optional<Snapshot> getSnapshot(String snapshotId) {
    return timed("getSnapshot", () -> cinder.getSnapshot(snapshotId));
  }

  @Override
  public Snapshot awaitSnapshotAvailable(String snapshotId, Backoff backoff) {
    return timed(
        "awaitSnapshotAvailable", () -> cinder.awaitSnapshotAvailable(snapshotId, backoff));
  }

  @Override
  public void deleteSnapshot(String snapshotId) {
    timed("deleteSnapshot", () -> cinder.deleteSnapshot(snapshotId));
  }

  @Override
  public List<Pool> pools() {
    return timed("pools", cinder::pools);
  }

  @Override
  public void close() {
    cinder.close();
  }
}
