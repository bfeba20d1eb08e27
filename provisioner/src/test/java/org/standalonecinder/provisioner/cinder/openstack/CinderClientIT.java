package org.standalonecinder.provisioner.cinder.openstack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.provisioner.cinder.Attachment;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.Capacity;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.ConnectionInfo;
import org.standalonecinder.provisioner.cinder.Connector;
import org.standalonecinder.provisioner.cinder.Microversion;
import org.standalonecinder.provisioner.cinder.Pool;
import org.standalonecinder.provisioner.cinder.Snapshot;
import org.standalonecinder.provisioner.cinder.SnapshotSpec;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.cinder.VolumeSpec;
import org.standalonecinder.provisioner.cinder.openstack.LocalCinder.Mode;

/** The Cinder client against the real local Cinder, in noauth and in keystone mode. */
class CinderClientIT {

  private static final Set<String> AVAILABLE = Set.of("available");
  private static final Backoff WAIT =
      Backoff.DEFAULT.withDeadline(java.time.Duration.ofSeconds(60));
  private static final Connector NODE =
      new Connector("iqn.2026-11.org.standalonecinder:it-node", "it-node", "127.0.0.1", false);
  private static final Map<Mode, OpenStackCinderClient> CLIENTS = new EnumMap<>(Mode.class);

  private final List<Runnable> cleanup = new ArrayList<>();

  static synchronized OpenStackCinderClient client(Mode mode) {
    return CLIENTS.computeIfAbsent(mode, m -> OpenStackCinderClient.create(LocalCinder.config(m)));
  }

  @AfterAll
  static void closeClients() {
    CLIENTS.values().forEach(CinderClient::close);
  }

  @AfterEach
  void cleanUp() {
    // Reverse order: dependants (clones, attachments) before what they depend on.
    for (int i = cleanup.size() - 1; i >= 0; i--) {
      try {
        cleanup.get(i).run();
      } catch (RuntimeException e) {
        // keep cleaning; a leak shows up in the no-leak assertions of later issues
      }
    }
  }

  private Volume newVolume(CinderClient c, VolumeSpec spec) {
    Volume v = c.createVolume(spec);
    cleanup.add(
        () -> {
          c.deleteVolume(v.id());
          c.awaitVolumeDeleted(v.id(), WAIT);
        });
    return c.awaitVolumeStatus(v.id(), AVAILABLE, WAIT);
  }

  private static String unique(String prefix) {
    return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Mode.class)
  void discoversTheApiVersionRange(Mode mode) {
    var v = client(mode).apiVersions();
    assertThat(v.min()).isEqualTo(Microversion.BASE);
    assertThat(v.max()).isEqualTo(new Microversion(3, 70));
    assertThat(v.used()).isEqualTo(new Microversion(3, 70));
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Mode.class)
  void reserveInitializeTerminateUnreserveDelete(Mode mode) throws Exception {
    CinderClient c = client(mode);
    Volume created = c.createVolume(VolumeSpec.blank(unique("it-flow"), 1));
    assertThat(created.status()).isEqualTo("creating");
    Volume v = c.awaitVolumeStatus(created.id(), AVAILABLE, WAIT);
    assertThat(v.sizeGib()).isEqualTo(1);

    c.reserve(v.id());
    assertThat(c.getVolume(v.id()).orElseThrow().status()).isEqualTo("attaching");

    ConnectionInfo info = c.initializeConnection(v.id(), NODE);
    assertThat(info.driverVolumeType()).isEqualTo("iscsi");
    assertThat(info.string("target_portal")).isEqualTo(LocalCinder.iscsiPortal());
    assertThat(info.string("target_iqn")).contains(v.id());
    assertThat(info.string("target_lun")).isEqualTo("1");
    assertThat(info.string("auth_method")).isEqualTo("CHAP");
    assertThat(info.string("auth_username")).isNotBlank();
    assertThat(info.toString()).doesNotContain(info.string("auth_password"));
    // The export is real: a user-space initiator logs in with the CHAP secret and sees 1 GiB.
    assertThat(readCapacity(info, info.string("auth_password"))).isEqualTo(1L << 30);
    assertThat(readCapacity(info, "wrong-secret")).isNegative();

    c.terminateConnection(v.id(), NODE);
    c.unreserve(v.id());
    assertThat(c.getVolume(v.id()).orElseThrow().status()).isEqualTo("available");

    c.deleteVolume(v.id());
    c.awaitVolumeDeleted(v.id(), WAIT);
    assertThat(c.getVolume(v.id())).isEmpty();
    // Deleting again is not an error: every rollback step must be safe to repeat.
    c.deleteVolume(v.id());
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Mode.class)
  void attachmentsApiWithoutAnInstance(Mode mode) {
    CinderClient c = client(mode);
    Volume v = newVolume(c, VolumeSpec.blank(unique("it-attach"), 1));

    Attachment a = c.createAttachment(v.id(), NODE);
    cleanup.add(() -> c.deleteAttachment(a.id()));
    assertThat(a.volumeId()).isEqualTo(v.id());
    assertThat(a.connectionInfo()).isNotNull();
    assertThat(a.connectionInfo().driverVolumeType()).isEqualTo("iscsi");
    assertThat(a.connectionInfo().string("target_iqn")).contains(v.id());

    // Not completed yet: the volume's own view does not list it, Cinder's attachment list does.
    assertThat(c.getVolume(v.id()).orElseThrow().attachmentIds()).isEmpty();
    assertThat(c.listAttachments(v.id())).extracting(Attachment::id).containsExactly(a.id());

    c.completeAttachment(a.id());
    Volume inUse = c.getVolume(v.id()).orElseThrow();
    assertThat(inUse.status()).isEqualTo("in-use");
    assertThat(inUse.attachmentIds()).contains(a.id());

    c.deleteAttachment(a.id());
    assertThat(c.awaitVolumeStatus(v.id(), AVAILABLE, WAIT).attachmentIds()).isEmpty();
    c.deleteAttachment(a.id());
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Mode.class)
  void cloneOfAVolume(Mode mode) {
    CinderClient c = client(mode);
    Volume source = newVolume(c, VolumeSpec.blank(unique("it-src"), 1));
    Volume clone = newVolume(c, VolumeSpec.blank(unique("it-clone"), 2).cloneOf(source.id()));
    assertThat(clone.sourceVolumeId()).isEqualTo(source.id());
    assertThat(clone.sizeGib()).isEqualTo(2);
  }

  private Snapshot newSnapshot(CinderClient c, SnapshotSpec spec) {
    Snapshot s = c.createSnapshot(spec);
    cleanup.add(
        () -> {
          c.deleteSnapshot(s.id());
          c.awaitSnapshotDeleted(s.id(), WAIT);
        });
    return c.awaitSnapshotStatus(s.id(), Set.of("available"), WAIT);
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Mode.class)
  void volumeFromASnapshot(Mode mode) {
    CinderClient c = client(mode);
    Volume source = newVolume(c, VolumeSpec.blank(unique("it-snapsrc"), 1));
    String name = unique("it-snap");
    Map<String, String> md = Map.of("cluster", "it-" + UUID.randomUUID());
    Snapshot s = newSnapshot(c, new SnapshotSpec(name, source.id(), "an IT snapshot", md));
    assertThat(s.volumeId()).isEqualTo(source.id());
    assertThat(s.sizeGib()).isEqualTo(1);
    assertThat(s.metadata()).isEqualTo(md);
    assertThat(s.createdAt()).isBetween(Instant.now().minusSeconds(600), Instant.now());
    // Found again by name and metadata (a retry), and by metadata alone (the restart sweep).
    assertThat(c.findSnapshots(name, md)).extracting(Snapshot::id).containsExactly(s.id());
    assertThat(c.findSnapshots(null, md)).extracting(Snapshot::id).containsExactly(s.id());
    assertThat(c.findSnapshots(name, Map.of("cluster", "another"))).isEmpty();
    Volume restored = newVolume(c, VolumeSpec.blank(unique("it-restored"), 2).fromSnapshot(s.id()));
    assertThat(restored.snapshotId()).isEqualTo(s.id());
    assertThat(restored.sizeGib()).isEqualTo(2);
  }

  /**
   * A snapshot of a volume in use by a node, at either side of microversion 3.66: below, Cinder
   * takes it only with {@code force} (which the client sends); from 3.66, only without.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({"below 3.66 with force, 3.65", "from 3.66 without, 3.70", "at 3.0, 3.0"})
  void aSnapshotOfAnInUseVolume(String name, String cap) throws Exception {
    java.nio.file.Path ini = java.nio.file.Files.createTempFile("cloud", ".conf");
    java.nio.file.Files.writeString(ini, "[BlockStorage]\nmax-microversion = " + cap + "\n");
    OpenStackCinderClient c =
        OpenStackCinderClient.create(
            org.standalonecinder.provisioner.cinder.openstack.config.CloudConfigLoader.load(
                ini, LocalCinder.osEnv(Mode.NOAUTH)));
    cleanup.add(c::close);
    assertThat(c.apiVersions().used()).hasToString(cap);
    Volume v = newVolume(c, VolumeSpec.blank(unique("it-inuse"), 1));
    c.reserve(v.id());
    c.initializeConnection(v.id(), NODE);
    c.markAttached(v.id(), NODE.host(), "/dev/vdb", false);
    Volume inUse = c.awaitVolumeStatus(v.id(), Set.of("in-use"), WAIT);
    cleanup.add(
        () -> {
          c.markDetached(v.id(), inUse.attachmentIds().get(0));
          c.awaitVolumeStatus(v.id(), AVAILABLE, WAIT);
        });
    Snapshot s = newSnapshot(c, new SnapshotSpec(unique("it-inuse-snap"), v.id(), null, Map.of()));
    assertThat(s.status()).isEqualTo("available");
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Mode.class)
  void aDeletedSnapshotIsGoneAndDeletingItAgainIsNoError(Mode mode) {
    CinderClient c = client(mode);
    Volume source = newVolume(c, VolumeSpec.blank(unique("it-snapdel"), 1));
    Snapshot s = c.createSnapshot(new SnapshotSpec(unique("it-gone"), source.id(), null, Map.of()));
    c.awaitSnapshotStatus(s.id(), Set.of("available"), WAIT);
    c.deleteSnapshot(s.id());
    c.awaitSnapshotDeleted(s.id(), WAIT);
    assertThat(c.getSnapshot(s.id())).isEmpty();
    c.deleteSnapshot(s.id());
    c.awaitSnapshotDeleted(s.id(), WAIT);
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Mode.class)
  void extend(Mode mode) {
    CinderClient c = client(mode);
    Volume v = newVolume(c, VolumeSpec.blank(unique("it-extend"), 1));
    c.extendVolume(v.id(), 3);
    Volume grown = c.awaitVolumeStatus(v.id(), AVAILABLE, WAIT);
    assertThat(grown.sizeGib()).isEqualTo(3);
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Mode.class)
  void lookupByNameAndMetadata(Mode mode) {
    CinderClient c = client(mode);
    String uid = UUID.randomUUID().toString();
    Map<String, String> md =
        Map.of("kubernetes.io/created-for/pvc/uid", uid, "standalone-cinder/cluster", "it");
    String name = "pvc-" + uid;
    Volume v = newVolume(c, VolumeSpec.blank(name, 1).withMetadata(md));
    newVolume(c, VolumeSpec.blank(unique("it-other"), 1).withMetadata(Map.of("x", "y")));

    assertThat(c.findVolumes(null, md)).extracting(Volume::id).containsExactly(v.id());
    assertThat(c.findVolumes(name, Map.of())).extracting(Volume::id).containsExactly(v.id());
    assertThat(c.findVolumes(name, Map.of("kubernetes.io/created-for/pvc/uid", "other"))).isEmpty();
    assertThat(v.metadata()).containsAllEntriesOf(md);
  }

  /** A state kept in metadata: merged into the rest, found by a filter, even while in use. */
  @ParameterizedTest(name = "{0}")
  @EnumSource(Mode.class)
  void metadataIsMergedAndFilteredOn(Mode mode) {
    CinderClient c = client(mode);
    String cluster = "it-" + UUID.randomUUID();
    Map<String, String> md =
        Map.of(
            "standalone-cinder.io/cluster-id",
            cluster,
            "standalone-cinder.io/state",
            "provisioning");
    Volume v = newVolume(c, VolumeSpec.blank(unique("it-state"), 1).withMetadata(md));
    var a = c.createAttachment(v.id(), NODE);
    try {
      c.completeAttachment(a.id());
      c.updateVolumeMetadata(v.id(), Map.of("standalone-cinder.io/state", "provisioned"));
      assertThat(c.getVolume(v.id()).orElseThrow().metadata())
          .containsEntry("standalone-cinder.io/state", "provisioned")
          .containsEntry("standalone-cinder.io/cluster-id", cluster);
      assertThat(c.findVolumes(null, md)).isEmpty();
      assertThat(
              c.findVolumes(
                  null,
                  Map.of(
                      "standalone-cinder.io/cluster-id",
                      cluster,
                      "standalone-cinder.io/state",
                      "provisioned")))
          .extracting(Volume::id)
          .containsExactly(v.id());
    } finally {
      c.deleteAttachment(a.id());
      c.awaitVolumeStatus(v.id(), AVAILABLE, WAIT);
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Mode.class)
  void poolsWithCapacity(Mode mode) {
    List<Pool> pools = client(mode).pools();
    // One pool per backend the lab runs, in no fixed order.
    List<String> backends = List.of(LocalCinder.env().get("CINDER_BACKEND").split(","));
    assertThat(pools).hasSize(backends.size());
    Pool file =
        pools.stream().filter(p -> p.name().endsWith("@file#file")).findFirst().orElseThrow();
    assertThat(file.storageProtocol()).isEqualTo("iSCSI");
    assertThat(file.total()).isInstanceOf(Capacity.Gib.class);
    assertThat(file.free()).isInstanceOf(Capacity.Gib.class);
    assertThat(file.allocated()).isInstanceOf(Capacity.Gib.class);
    assertThat(file.maxOverSubscriptionRatio()).isEqualTo(20.0);
    if (backends.contains("rbd")) {
      Pool rbd =
          pools.stream().filter(p -> p.name().endsWith("@rbd#rbd")).findFirst().orElseThrow();
      assertThat(rbd.storageProtocol()).isEqualTo("ceph");
      // Cinder's RBD driver reports no provisioned capacity: "unknown", not zero.
      assertThat(rbd.provisioned()).isInstanceOf(Capacity.Unknown.class);
    }
  }

  static Stream<Arguments> errorCases() {
    List<Arguments> rows = new ArrayList<>();
    for (Mode m : Mode.values()) {
      rows.add(
          row(
              m,
              "reserve an unknown volume",
              CinderException.NotFound.class,
              "could not be found",
              (c, v) -> c.reserve(UUID.randomUUID().toString())));
      rows.add(
          row(
              m,
              "over quota",
              CinderException.QuotaExceeded.class,
              "exceeds allowed gigabytes quota",
              (c, v) -> c.createVolume(VolumeSpec.blank(unique("it-huge"), 100_000))));
      rows.add(
          row(
              m,
              "reserve twice",
              CinderException.BadRequest.class,
              "must be available to reserve",
              (c, v) -> {
                c.reserve(v.id());
                try {
                  c.reserve(v.id());
                } finally {
                  c.unreserve(v.id());
                }
              }));
      rows.add(
          row(
              m,
              "extend while attaching",
              CinderException.BadRequest.class,
              "to extend, currently attaching",
              (c, v) -> {
                c.reserve(v.id());
                try {
                  c.extendVolume(v.id(), 2);
                } finally {
                  c.unreserve(v.id());
                }
              }));
      rows.add(
          row(
              m,
              "delete a reserved volume",
              CinderException.BadRequest.class,
              "Volume status must be available or error",
              (c, v) -> {
                c.reserve(v.id());
                try {
                  c.deleteVolume(v.id());
                } finally {
                  c.unreserve(v.id());
                }
              }));
      rows.add(
          row(
              m,
              "shrink",
              CinderException.BadRequest.class,
              "New size for extend must be greater than current size",
              (c, v) -> c.extendVolume(v.id(), 1)));
      rows.add(
          row(
              m,
              "clone an unknown volume",
              CinderException.NotFound.class,
              "could not be found",
              (c, v) ->
                  c.createVolume(
                      VolumeSpec.blank(unique("it-orphan"), 1)
                          .cloneOf(UUID.randomUUID().toString()))));
      rows.add(
          row(
              m,
              "delete a volume that has a snapshot",
              CinderException.BadRequest.class,
              "have snapshots",
              (c, v) -> {
                Snapshot s =
                    c.createSnapshot(new SnapshotSpec(unique("it-pin"), v.id(), null, Map.of()));
                try {
                  c.awaitSnapshotStatus(s.id(), Set.of("available"), WAIT);
                  c.deleteVolume(v.id());
                } finally {
                  c.deleteSnapshot(s.id());
                  c.awaitSnapshotDeleted(s.id(), WAIT);
                }
              }));
      rows.add(
          row(
              m,
              "delete an in-use volume",
              CinderException.BadRequest.class,
              "must not be migrating, attached",
              (c, v) -> {
                Attachment a = c.createAttachment(v.id(), NODE);
                try {
                  c.completeAttachment(a.id());
                  c.deleteVolume(v.id());
                } finally {
                  c.deleteAttachment(a.id());
                }
              }));
      rows.add(
          row(
              m,
              "unknown volume type",
              CinderException.NotFound.class,
              "could not be found",
              (c, v) ->
                  c.createVolume(VolumeSpec.blank(unique("it-type"), 1).withType("no-such-type"))));
    }
    return rows.stream();
  }

  private static Arguments row(
      Mode m,
      String name,
      Class<? extends CinderException> type,
      String message,
      BiConsumer<CinderClient, Volume> action) {
    return Arguments.of(m + ": " + name, m, type, message, action);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("errorCases")
  void errorsAreTyped(
      String name,
      Mode mode,
      Class<? extends CinderException> type,
      String message,
      BiConsumer<CinderClient, Volume> action) {
    CinderClient c = client(mode);
    Volume v = newVolume(c, VolumeSpec.blank(unique("it-err"), 1));
    assertThatThrownBy(() -> action.accept(c, v))
        .isInstanceOf(type)
        .hasMessageContaining(message)
        .satisfies(
            e ->
                assertThat(((CinderException) e).requestId())
                    .hasValueSatisfying(id -> assertThat(id).startsWith("req-")));
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(Mode.class)
  void unknownVolumeIsEmptyNotAnError(Mode mode) {
    assertThat(client(mode).getVolume(UUID.randomUUID().toString())).isEmpty();
  }

  @org.junit.jupiter.api.Test
  void keystoneRefusesAWrongPassword() {
    Map<String, String> env = new java.util.HashMap<>(LocalCinder.osEnv(Mode.KEYSTONE));
    env.put("OS_PASSWORD", "not-the-password");
    try (CinderClient c =
        OpenStackCinderClient.create(
            org.standalonecinder.provisioner.cinder.openstack.config.CloudConfigLoader.load(
                null, env))) {
      assertThatThrownBy(c::apiVersions)
          .isInstanceOf(CinderException.Unauthorized.class)
          .hasMessageContaining("provisioner")
          .hasMessageNotContaining("not-the-password");
    }
  }

  /**
   * READ CAPACITY through libiscsi's user-space initiator ({@code qemu-img info}): the size in
   * bytes, or -1 when the login fails.
   */
  private static long readCapacity(ConnectionInfo info, String password)
      throws IOException, InterruptedException {
    String url =
        "iscsi://"
            + info.string("auth_username")
            + "%"
            + password
            + "@"
            + info.string("target_portal")
            + "/"
            + info.string("target_iqn")
            + "/"
            + info.string("target_lun");
    Process p =
        new ProcessBuilder("qemu-img", "info", "--output=json", url)
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return -1;
    }
    if (p.exitValue() != 0) {
      return -1;
    }
    var m = java.util.regex.Pattern.compile("\"virtual-size\":\\s*(\\d+)").matcher(out);
    return m.find() ? Long.parseLong(m.group(1)) : -1;
  }
}
