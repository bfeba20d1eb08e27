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
  final java.util.Set<String> classes = new java.util.LinkedHashSet<>();
  final Map<String, PersistentVolumeClaim> claims = new LinkedHashMap<>();
  final Map<String, PersistentVolume> volumes = new LinkedHashMap<>();

  /**
   * The usual start: classes {@code snap} (Delete) and {@code keep} (Retain), claim {@code data}
   * bound to {@code pv-data}.
   */
  static Fixture usual() {
    Fixture f = new Fixture();
    f.classes.add("snap");
    f.classes.add("keep");
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
    return edit(
        s,
        m -> {
          m.deleting = deleting;
          m.finalizers = finalizers;
        });
  }

  static Snap source(Snap s, String className, String claim, String content) {
    return edit(
        s,
        m -> {
          m.className = className;
          m.claimName = claim;
          m.contentName = content;
        });
  }

  static Snap status(Snap s, Object... keyValues) {
    Map<String, Object> status = new LinkedHashMap<>();
    for (int i = 0; i < keyValues.length; i += 2) {
      status.put((String) keyValues[i], keyValues[i + 1]);
    }
    return edit(s, m -> m.status = status);
  }

  /** A snapshot's fields, to change a few of them. */
  static final class SnapFields {
    String namespace;
    String name;
    String uid;
    String resourceVersion;
    boolean deleting;
    List<String> finalizers;
    String className;
    String claimName;
    String contentName;
    Map<String, Object> status;
  }

  static Snap edit(Snap s, java.util.function.Consumer<SnapFields> change) {
    SnapFields m = new SnapFields();
    m.namespace = s.namespace();
    m.name = s.name();
    m.uid = s.uid();
    m.resourceVersion = s.resourceVersion();
    m.deleting = s.deleting();
    m.finalizers = s.finalizers();
    m.className = s.className();
    m.claimName = s.claimName();
    m.contentName = s.contentName();
    m.status = s.status();
    change.accept(m);
    return new Snap(
        m.namespace,
        m.name,
        m.uid,
        m.resourceVersion,
        m.deleting,
        m.finalizers,
        m.className,
        m.claimName,
        m.contentName,
        m.status);
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
    return edit(
        c,
        m -> {
          m.deletionPolicy = policy;
          m.finalizers = finalizers;
        });
  }

  static SnapContent ref(SnapContent c, String name, String namespace, String uid) {
    return edit(
        c,
        m -> {
          m.refName = name;
          m.refNamespace = namespace;
          m.refUid = uid;
        });
  }

  static SnapContent handles(SnapContent c, String volume, String snapshot, String className) {
    return edit(
        c,
        m -> {
          m.volumeHandle = volume;
          m.snapshotHandle = snapshot;
          m.className = className;
        });
  }

  static SnapContent contentStatus(SnapContent c, Map<String, Object> status) {
    return edit(c, m -> m.status = status);
  }

  static SnapContent driver(SnapContent c, String driver) {
    return edit(c, m -> m.driver = driver);
  }

  static SnapContent renamed(SnapContent c, String name) {
    return edit(c, m -> m.name = name);
  }

  static SnapContent annotated(SnapContent c, String key) {
    return edit(c, m -> m.annotations = Map.of(key, "yes"));
  }

  static SnapContent deleting(SnapContent c) {
    return edit(c, m -> m.deleting = true);
  }

  /** A content's fields, to change a few of them. */
  static final class ContentFields {
    String name;
    String resourceVersion;
    boolean deleting;
    List<String> finalizers;
    Map<String, String> annotations;
    String deletionPolicy;
    String volumeHandle;
    String snapshotHandle;
    String refNamespace;
    String refName;
    String refUid;
    String className;
    Map<String, Object> status;
    String driver;
  }

  static SnapContent edit(SnapContent c, java.util.function.Consumer<ContentFields> change) {
    ContentFields m = new ContentFields();
    m.name = c.name();
    m.resourceVersion = c.resourceVersion();
    m.deleting = c.deleting();
    m.finalizers = c.finalizers();
    m.annotations = c.annotations();
    m.deletionPolicy = c.deletionPolicy();
    m.volumeHandle = c.volumeHandle();
    m.snapshotHandle = c.snapshotHandle();
    m.refNamespace = c.refNamespace();
    m.refName = c.refName();
    m.refUid = c.refUid();
    m.className = c.className();
    m.status = c.status();
    m.driver = c.driver();
    change.accept(m);
    return new SnapContent(
        m.name,
        m.resourceVersion,
        m.deleting,
        m.finalizers,
        m.annotations,
        m.deletionPolicy,
        m.volumeHandle,
        m.snapshotHandle,
        m.refNamespace,
        m.refName,
        m.refUid,
        m.className,
        m.status,
        m.driver);
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
  public boolean classExists(String name) {
    return classes.contains(name);
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
