package org.standalonecinder.e2e.standin;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A world of snapshot objects for the rules' table, in namespace {@code ns}. */
final class Fixture implements World {

  static final String NS = "ns";

  final Map<String, Snap> snapshots = new LinkedHashMap<>();
  final Map<String, SnapContent> contents = new LinkedHashMap<>();
  final Map<String, SnapClass> classes = new LinkedHashMap<>();
  final Map<String, PersistentVolumeClaim> claims = new LinkedHashMap<>();
  final Map<String, PersistentVolume> volumes = new LinkedHashMap<>();

  /**
   * The usual start: classes {@code snap} (Delete) and {@code keep} (Retain), claim {@code data}
   * bound to {@code pv-data}.
   */
  static Fixture usual() {
    Fixture f = new Fixture();
    f.classes.put("snap", new SnapClass("snap", "openstack.org/standalone-cinder", "Delete"));
    f.classes.put("keep", new SnapClass("keep", "openstack.org/standalone-cinder", "Retain"));
    f.claim("data", "Bound", "pv-data");
    f.volume("pv-data", "data", false);
    return f;
  }

  Fixture claim(String name, String phase, String volume, String... finalizers) {
    claims.put(
        name,
        new PersistentVolumeClaimBuilder()
            .withNewMetadata()
            .withNamespace(NS)
            .withName(name)
            .withUid("uid-" + name)
            .withResourceVersion("7")
            .withFinalizers(finalizers)
            .endMetadata()
            .withNewSpec()
            .withVolumeName(volume)
            .endSpec()
            .withNewStatus()
            .withPhase(phase)
            .endStatus()
            .build());
    return this;
  }

  /** A claim restoring from snapshot {@code snapshot}. */
  Fixture restore(String name, String phase, String snapshot) {
    claims.put(
        name,
        new PersistentVolumeClaimBuilder()
            .withNewMetadata()
            .withNamespace(NS)
            .withName(name)
            .withUid("uid-" + name)
            .endMetadata()
            .withNewSpec()
            .withNewDataSource()
            .withApiGroup(Names.GROUP)
            .withKind("VolumeSnapshot")
            .withName(snapshot)
            .endDataSource()
            .endSpec()
            .withNewStatus()
            .withPhase(phase)
            .endStatus()
            .build());
    return this;
  }

  Fixture volume(String name, String claim, boolean csi) {
    var b =
        new PersistentVolumeBuilder()
            .withNewMetadata()
            .withName(name)
            .endMetadata()
            .withNewSpec()
            .withNewClaimRef()
            .withNamespace(NS)
            .withName(claim)
            .withUid("uid-" + claim)
            .endClaimRef();
    var spec =
        csi
            ? b.withNewCsi().withDriver("other.csi.example.org").withVolumeHandle("v1").endCsi()
            : b.withNewIscsi()
                .withTargetPortal("127.0.0.1:3260")
                .withIqn("iqn.x")
                .withLun(1)
                .endIscsi();
    volumes.put(name, spec.endSpec().build());
    return this;
  }

  Fixture add(Snap s) {
    snapshots.put(s.namespace() + "/" + s.name(), s);
    return this;
  }

  Fixture add(SnapContent c) {
    contents.put(c.name(), c);
    return this;
  }

  /** A snapshot of claim {@code data} in class {@code snap}, uid {@code u1}. */
  static Snap snap(String name) {
    return new Snap(NS, name, "u1", "5", false, List.of(), "snap", "data", null, null);
  }

  static Snap snap(Snap s, boolean deleting, List<String> finalizers) {
    return new Snap(
        s.namespace(),
        s.name(),
        s.uid(),
        s.resourceVersion(),
        deleting,
        finalizers,
        s.className(),
        s.claimName(),
        s.contentName(),
        s.status());
  }

  static Snap source(Snap s, String className, String claim, String content) {
    return new Snap(
        s.namespace(),
        s.name(),
        s.uid(),
        s.resourceVersion(),
        s.deleting(),
        s.finalizers(),
        className,
        claim,
        content,
        s.status());
  }

  static Snap status(Snap s, Object... keyValues) {
    Map<String, Object> status = new LinkedHashMap<>();
    for (int i = 0; i < keyValues.length; i += 2) {
      status.put((String) keyValues[i], keyValues[i + 1]);
    }
    return new Snap(
        s.namespace(),
        s.name(),
        s.uid(),
        s.resourceVersion(),
        s.deleting(),
        s.finalizers(),
        s.className(),
        s.claimName(),
        s.contentName(),
        status);
  }

  /** The dynamic content of {@link #snap}: {@code snapcontent-u1}, Delete, a volume handle. */
  static SnapContent content() {
    return new SnapContent(
        "snapcontent-u1",
        "9",
        false,
        List.of(),
        Map.of(),
        "Delete",
        "vol-1",
        null,
        NS,
        "s",
        "u1",
        "snap",
        null,
        "openstack.org/standalone-cinder");
  }

  static SnapContent content(SnapContent c, String policy, List<String> finalizers) {
    return new SnapContent(
        c.name(),
        c.resourceVersion(),
        c.deleting(),
        finalizers,
        c.annotations(),
        policy,
        c.volumeHandle(),
        c.snapshotHandle(),
        c.refNamespace(),
        c.refName(),
        c.refUid(),
        c.className(),
        c.status(),
        c.driver());
  }

  static SnapContent ref(SnapContent c, String name, String namespace, String uid) {
    return new SnapContent(
        c.name(),
        c.resourceVersion(),
        c.deleting(),
        c.finalizers(),
        c.annotations(),
        c.deletionPolicy(),
        c.volumeHandle(),
        c.snapshotHandle(),
        namespace,
        name,
        uid,
        c.className(),
        c.status(),
        c.driver());
  }

  static SnapContent handles(SnapContent c, String volume, String snapshot, String className) {
    return new SnapContent(
        c.name(),
        c.resourceVersion(),
        c.deleting(),
        c.finalizers(),
        c.annotations(),
        c.deletionPolicy(),
        volume,
        snapshot,
        c.refNamespace(),
        c.refName(),
        c.refUid(),
        className,
        c.status(),
        c.driver());
  }

  static SnapContent contentStatus(SnapContent c, Map<String, Object> status) {
    return new SnapContent(
        c.name(),
        c.resourceVersion(),
        c.deleting(),
        c.finalizers(),
        c.annotations(),
        c.deletionPolicy(),
        c.volumeHandle(),
        c.snapshotHandle(),
        c.refNamespace(),
        c.refName(),
        c.refUid(),
        c.className(),
        status,
        c.driver());
  }

  static SnapContent driver(SnapContent c, String driver) {
    return new SnapContent(
        c.name(),
        c.resourceVersion(),
        c.deleting(),
        c.finalizers(),
        c.annotations(),
        c.deletionPolicy(),
        c.volumeHandle(),
        c.snapshotHandle(),
        c.refNamespace(),
        c.refName(),
        c.refUid(),
        c.className(),
        c.status(),
        driver);
  }

  static SnapContent renamed(SnapContent c, String name) {
    return new SnapContent(
        name,
        c.resourceVersion(),
        c.deleting(),
        c.finalizers(),
        c.annotations(),
        c.deletionPolicy(),
        c.volumeHandle(),
        c.snapshotHandle(),
        c.refNamespace(),
        c.refName(),
        c.refUid(),
        c.className(),
        c.status(),
        c.driver());
  }

  static SnapContent annotated(SnapContent c, String key) {
    return new SnapContent(
        c.name(),
        c.resourceVersion(),
        c.deleting(),
        c.finalizers(),
        Map.of(key, "yes"),
        c.deletionPolicy(),
        c.volumeHandle(),
        c.snapshotHandle(),
        c.refNamespace(),
        c.refName(),
        c.refUid(),
        c.className(),
        c.status(),
        c.driver());
  }

  @Override
  public Snap snapshot(String namespace, String name) {
    return snapshots.get(namespace + "/" + name);
  }

  @Override
  public List<Snap> snapshotsIn(String namespace) {
    return new ArrayList<>(
        snapshots.values().stream().filter(s -> s.namespace().equals(namespace)).toList());
  }

  @Override
  public SnapContent content(String name) {
    return contents.get(name);
  }

  @Override
  public SnapClass snapshotClass(String name) {
    return classes.get(name);
  }

  @Override
  public PersistentVolumeClaim claim(String namespace, String name) {
    return NS.equals(namespace) && name != null ? claims.get(name) : null;
  }

  @Override
  public List<PersistentVolumeClaim> claimsIn(String namespace) {
    return NS.equals(namespace) ? List.copyOf(claims.values()) : List.of();
  }

  @Override
  public PersistentVolume volume(String name) {
    return volumes.get(name);
  }
}
