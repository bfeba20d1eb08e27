package org.standalonecinder.provisioner.cinder;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Wraps a real client and fails calls at random: before the call (Cinder never saw it) or after it
 * (Cinder did it, the answer was lost), the worst case for idempotency. Seeded, so a failing run
 * can be repeated.
 */
public final class FaultyCinderClient implements CinderClient {

  private final CinderClient delegate;
  private final Random random;
  private final double probability;
  private final AtomicInteger injected = new AtomicInteger();

  public FaultyCinderClient(CinderClient delegate, long seed, double probability) {
    this.delegate = delegate;
    this.random = new Random(seed);
    this.probability = probability;
  }

  public int injected() {
    return injected.get();
  }

  private synchronized double roll() {
    return random.nextDouble();
  }

  private <T> T maybe(String op, boolean mayHappen, Supplier<T> call) {
    double r = roll();
    if (r < probability / 2) {
      injected.incrementAndGet();
      throw new CinderException.Unavailable(op + ": injected fault before the call", 0, null, null);
    }
    T result = call.get();
    if (mayHappen && r < probability) {
      injected.incrementAndGet();
      throw new CinderException.Unavailable(op + ": injected fault, answer lost", 0, null, null);
    }
    return result;
  }

  private void maybeRun(String op, Runnable call) {
    maybe(
        op,
        true,
        () -> {
          call.run();
          return null;
        });
  }

  @Override
  public ApiVersions apiVersions() {
    return delegate.apiVersions();
  }

  @Override
  public Volume createVolume(VolumeSpec spec) {
    return maybe("createVolume", true, () -> delegate.createVolume(spec));
  }

  @Override
  public Optional<Volume> getVolume(String volumeId) {
    return maybe("getVolume", false, () -> delegate.getVolume(volumeId));
  }

  @Override
  public List<Volume> findVolumes(String name, Map<String, String> metadata) {
    return maybe("findVolumes", false, () -> delegate.findVolumes(name, metadata));
  }

  @Override
  public Volume awaitVolumeStatus(String volumeId, Set<String> wanted, Backoff backoff) {
    return delegate.awaitVolumeStatus(volumeId, wanted, backoff);
  }

  @Override
  public void awaitVolumeDeleted(String volumeId, Backoff backoff) {
    delegate.awaitVolumeDeleted(volumeId, backoff);
  }

  @Override
  public void updateVolumeMetadata(String volumeId, Map<String, String> metadata) {
    maybeRun("updateVolumeMetadata", () -> delegate.updateVolumeMetadata(volumeId, metadata));
  }

  @Override
  public void deleteVolume(String volumeId) {
    maybeRun("deleteVolume", () -> delegate.deleteVolume(volumeId));
  }

  @Override
  public void extendVolume(String volumeId, int newSizeGib) {
    maybeRun("extendVolume", () -> delegate.extendVolume(volumeId, newSizeGib));
  }

  @Override
  public void reserve(String volumeId) {
    maybeRun("reserve", () -> delegate.reserve(volumeId));
  }

  @Override
  public void unreserve(String volumeId) {
    maybeRun("unreserve", () -> delegate.unreserve(volumeId));
  }

  @Override
  public void resetToAvailable(String volumeId) {
    maybeRun("resetToAvailable", () -> delegate.resetToAvailable(volumeId));
  }

  @Override
  public ConnectionInfo initializeConnection(String volumeId, Connector connector) {
    return maybe(
        "initializeConnection", true, () -> delegate.initializeConnection(volumeId, connector));
  }

  @Override
  public void terminateConnection(String volumeId, Connector connector) {
    maybeRun("terminateConnection", () -> delegate.terminateConnection(volumeId, connector));
  }

  @Override
  public Attachment createAttachment(String volumeId, Connector connector, boolean readOnly) {
    return maybe(
        "createAttachment", true, () -> delegate.createAttachment(volumeId, connector, readOnly));
  }

  @Override
  public Optional<Attachment> getAttachment(String attachmentId) {
    return maybe("getAttachment", false, () -> delegate.getAttachment(attachmentId));
  }

  @Override
  public void markAttached(String volumeId, String hostName, String mountpoint, boolean readOnly) {
    maybeRun("markAttached", () -> delegate.markAttached(volumeId, hostName, mountpoint, readOnly));
  }

  @Override
  public void markDetached(String volumeId, String attachmentId) {
    maybeRun("markDetached", () -> delegate.markDetached(volumeId, attachmentId));
  }

  @Override
  public List<Attachment> listAttachments(String volumeId) {
    return maybe("listAttachments", false, () -> delegate.listAttachments(volumeId));
  }

  @Override
  public void completeAttachment(String attachmentId) {
    maybeRun("completeAttachment", () -> delegate.completeAttachment(attachmentId));
  }

  @Override
  public void deleteAttachment(String attachmentId) {
    maybeRun("deleteAttachment", () -> delegate.deleteAttachment(attachmentId));
  }

  @Override
  public Snapshot createSnapshot(String volumeId, String name, Map<String, String> metadata) {
    return maybe("createSnapshot", true, () -> delegate.createSnapshot(volumeId, name, metadata));
  }

  @Override
  public Optional<Snapshot> getSnapshot(String snapshotId) {
    return delegate.getSnapshot(snapshotId);
  }

  @Override
  public Snapshot awaitSnapshotAvailable(String snapshotId, Backoff backoff) {
    return delegate.awaitSnapshotAvailable(snapshotId, backoff);
  }

  @Override
  public void deleteSnapshot(String snapshotId) {
    maybeRun("deleteSnapshot", () -> delegate.deleteSnapshot(snapshotId));
  }

  @Override
  public List<Pool> pools() {
    return delegate.pools();
  }

  @Override
  public void close() {
    delegate.close();
  }
}
