package org.standalonecinder.provisioner.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.Connector;
import org.standalonecinder.provisioner.cinder.FakeCinderClient;
import org.standalonecinder.provisioner.cinder.Microversion;
import org.standalonecinder.provisioner.cinder.Volume;

class AttacherTest {

  static final String IQN = "iqn.2010-10.org.openstack:volume-x";
  static final String NODE =
      "run iscsiadm -m node -T " + IQN + " -p 127.0.0.1:3260 --interface default ";
  static final String DEVICE = "/dev/disk/by-path/ip-127.0.0.1:3260-iscsi-" + IQN + "-lun-1";
  static final List<String> LOGIN =
      List.of(
          NODE + "--op new",
          NODE + "--op update -n node.session.auth.authmethod -v CHAP",
          NODE + "--op update -n node.session.auth.username -v chap-user",
          NODE + "--op update -n node.session.auth.password -v ***",
          NODE + "--login",
          NODE + "--op update -n node.startup -v automatic");
  static final List<String> LOGOUT =
      List.of(
          NODE + "--op update -n node.startup -v manual", NODE + "--logout", NODE + "--op delete");

  FakeCinderClient cinder;
  FakeHost host;
  List<String> said;

  @BeforeEach
  void setUp() {
    cinder = new FakeCinderClient();
    host = new FakeHost(cinder);
    said = new ArrayList<>();
  }

  Attacher attacher(String hostName) {
    return new Attacher(
        cinder,
        host,
        new Connector("iqn.2026-11.org.example:" + hostName, hostName, "10.1.1.1", false),
        Duration.ofMillis(300),
        said::add);
  }

  Attacher attacher() {
    return attacher("host1");
  }

  Volume seed(String status, boolean multiattach) {
    return cinder.seed(
        new Volume(
            "vol-9",
            "data",
            status,
            1,
            "nova",
            "lab-iscsi",
            Map.of(),
            null,
            null,
            multiattach,
            List.of()));
  }

  List<String> log(String... lines) {
    List<String> out = new ArrayList<>();
    for (String l : lines) {
      if (l == null) {
        continue;
      }
      if (l.equals("LOGIN")) {
        out.addAll(LOGIN);
      } else if (l.equals("LOGIN-REFUSED")) {
        // the login fails: node.startup is not set
        out.addAll(LOGIN.subList(0, LOGIN.size() - 1));
      } else if (l.equals("LOGOUT")) {
        out.addAll(LOGOUT);
      } else {
        out.add(l);
      }
    }
    return out;
  }

  @Test
  void anAttachCreatesLogsInWaitsForTheDeviceAndOnlyThenCompletes() {
    seed("available", false);
    Attacher.Attached a = attacher().attach("vol-9", false);

    assertThat(a.device()).isEqualTo(DEVICE);
    assertThat(a.legacy()).isFalse();
    assertThat(cinder.log())
        .containsExactlyElementsOf(
            log("getVolume vol-9", "createAttachment vol-9", "LOGIN", "completeAttachment att-1"));
    Volume v = cinder.volumes().get("vol-9");
    assertThat(v.status()).isEqualTo("in-use");
    assertThat(v.attachedHosts()).containsExactly(Map.entry("att-1", "host1"));
    assertThat(cinder.modes()).containsExactly(Map.entry("att-1", "rw"));
    assertThat(String.join("\n", said)).doesNotContain("chap-secret");
  }

  @Test
  void aReadOnlyAttachIsRecordedAsSuchAndTheDeviceIsMadeReadOnly() {
    seed("available", false);
    attacher().attach("vol-9", true);

    assertThat(cinder.log())
        .containsSequence("run blockdev --setro " + DEVICE, "completeAttachment att-1");
    assertThat(cinder.modes()).containsExactly(Map.entry("att-1", "ro"));
  }

  /** Where the attach fails; each row: what ran, then what was undone, newest first. */
  /**
   * A kubelet on the same node discovers through the portal and rewrites its node records: an
   * update finds no record for a moment (iscsiadm's exit code 6). Each row: how often the step
   * fails so, how often it ran, and whether the attach got through.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          the record back at the second run        | node.startup -v automatic | 6 | 1  | 2 | true
          back at the last run                      | node.startup -v automatic | 6 | 4  | 5 | true
          gone for longer: the attach fails, undone | node.startup -v automatic | 6 | 99 | 5 | false
          the CHAP update too                       | auth.username             | 6 | 2  | 3 | true
          another failure is not run again          | node.startup -v automatic | 8 | 1  | 1 | false
          """)
  void aNodeRecordRewrittenForAMomentIsUpdatedAgain(
      String name, String step, int code, int failures, int runs, boolean attached) {
    seed("available", false);
    host.failingTimes(step, code, failures);
    if (attached) {
      attacher().attach("vol-9", false);
      assertThat(cinder.volumes().get("vol-9").status()).isEqualTo("in-use");
    } else {
      assertThatThrownBy(() -> attacher().attach("vol-9", false))
          .isInstanceOf(HostException.class)
          .hasMessageContaining("exit code " + code);
      assertThat(cinder.attachments()).isEmpty();
      assertThat(host.connected()).isFalse();
    }
    assertThat(cinder.log()).filteredOn(l -> l.contains(step)).hasSize(runs);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          Cinder refuses the attachment  | createAttachment |           | getVolume vol-9, createAttachment vol-9
          the export is Fibre Channel    | export           |           | getVolume vol-9, createAttachment vol-9, deleteAttachment att-1
          the login fails                | --login          |           | getVolume vol-9, createAttachment vol-9, LOGIN-REFUSED, LOGOUT, deleteAttachment att-1
          the device never appears       | device           |           | getVolume vol-9, createAttachment vol-9, LOGIN, LOGOUT, deleteAttachment att-1
          the device cannot be read-only | blockdev         | ro        | getVolume vol-9, createAttachment vol-9, LOGIN, run blockdev --setro DEVICE, LOGOUT, deleteAttachment att-1
          Cinder fails the completion    | completeAttachment |         | getVolume vol-9, createAttachment vol-9, LOGIN, completeAttachment att-1, LOGOUT, deleteAttachment att-1
          """)
  void anAttachThatFailsLeavesCinderAsItWas(
      String name, String failing, String mode, String expected) {
    seed("available", false);
    switch (failing) {
      case "createAttachment", "completeAttachment" ->
          cinder.failNext(
              failing, () -> new CinderException.Unavailable("cinder-api died", 503, null, null));
      case "export" -> cinder.export("fibre_channel", Map.of("target_lun", 1));
      case "device" -> host.deviceAppears = false;
      default -> host.failing(failing, 8);
    }

    assertThatThrownBy(() -> attacher().attach("vol-9", "ro".equals(mode)))
        .isInstanceOfAny(CinderException.class, HostException.class);

    assertThat(cinder.log())
        .containsExactlyElementsOf(
            log(expected.replace("DEVICE", DEVICE).split(", ")).stream()
                .map(
                    l ->
                        l.startsWith("run iscsiadm")
                                && l.contains("--login")
                                && failing.equals("--login")
                            ? l
                            : l)
                .toList());
    assertThat(cinder.attachments()).isEmpty();
    assertThat(cinder.volumes().get("vol-9").status()).isEqualTo("available");
    assertThat(host.connected()).isFalse();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          succeeds                 |                  | getVolume vol-9, reserve vol-9, initializeConnection vol-9, LOGIN, markAttached vol-9, getVolume vol-9
          fails at the login       | --login          | getVolume vol-9, reserve vol-9, initializeConnection vol-9, LOGIN-REFUSED, LOGOUT, terminateConnection vol-9, unreserve vol-9
          fails at os-attach       | markAttached     | getVolume vol-9, reserve vol-9, initializeConnection vol-9, LOGIN, markAttached vol-9, LOGOUT, terminateConnection vol-9, unreserve vol-9
          """)
  void onACloudWithoutTheAttachmentsApiTheAttachIsReserveExportAndOsAttach(
      String name, String failing, String expected) {
    cinder.microversion(new Microversion(3, 0));
    seed("available", false);
    if ("markAttached".equals(failing)) {
      cinder.failNext(failing, () -> new CinderException.Unavailable("down", 503, null, null));
    } else if (failing != null) {
      host.failing(failing, 8);
    }

    if (failing == null) {
      Attacher.Attached a = attacher().attach("vol-9", false);
      assertThat(a.legacy()).isTrue();
      assertThat(a.attachmentId()).isEqualTo("att-1");
      assertThat(cinder.volumes().get("vol-9").status()).isEqualTo("in-use");
    } else {
      assertThatThrownBy(() -> attacher().attach("vol-9", false))
          .isInstanceOf(RuntimeException.class);
      assertThat(cinder.volumes().get("vol-9").status()).isEqualTo("available");
    }
    assertThat(cinder.log()).containsExactlyElementsOf(log(expected.split(", ")));
  }

  @Test
  void anOsAttachThatSucceededIsNotUndoneWhenTheLookAfterItFails() {
    cinder.microversion(new Microversion(3, 0));
    seed("available", false);
    cinder.failNext("getVolume", () -> null);
    cinder.failNext(
        "getVolume", () -> new CinderException.Unavailable("cinder-api died", 503, null, null));

    Attacher.Attached a = attacher().attach("vol-9", false);

    assertThat(a.attachmentId()).isNull();
    assertThat(cinder.volumes().get("vol-9").status()).isEqualTo("in-use");
    assertThat(cinder.log()).last().isEqualTo("getVolume vol-9");
    assertThat(host.connected()).isTrue();
  }

  @Test
  void aReadOnlyAttachBelowMicroversion354GoesThroughOsAttach() {
    cinder.microversion(new Microversion(3, 50));
    seed("available", false);

    assertThat(attacher().attach("vol-9", true).legacy()).isTrue();
    assertThat(cinder.modes()).containsExactly(Map.entry("att-1", "ro"));
  }

  /** Refusals before anything was changed: the log shows only the look at the volume. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          not root                             | available | false | host1 |       | needs root
          an unknown volume                    |           | false | host1 |       | Cinder has no volume vol-9
          a volume in use elsewhere            | in-use    | false | host2 | other | is in-use (attached to other) and not multiattach
          a volume being attached              | attaching | false | host1 |       | is attaching
          a volume attached here already       | in-use    | true  | host1 | host1 | is attached to this host (host1) already, as attachment att-1
          """)
  void anAttachThatCannotBeIsRefusedWithoutChangingAnything(
      String name, String status, boolean multiattach, String me, String attachedTo, String why) {
    if (status != null) {
      seed(status.equals("in-use") ? "available" : status, multiattach);
    }
    if (attachedTo != null) {
      attacher(attachedTo).attach("vol-9", false);
    }
    host.privileged = !name.equals("not root");
    cinder.clearLog();

    assertThatThrownBy(() -> attacher(me).attach("vol-9", false)).hasMessageContaining(why);
    assertThat(cinder.log()).allMatch(l -> l.startsWith("getVolume"));
  }

  @Test
  void aMultiattachVolumeInUseElsewhereIsAttachedHereToo() {
    seed("available", true);
    attacher("host2").attach("vol-9", false);

    attacher("host1").attach("vol-9", false);

    assertThat(cinder.volumes().get("vol-9").attachedHosts())
        .containsOnly(Map.entry("att-1", "host2"), Map.entry("att-2", "host1"));
  }

  @Test
  void aDetachLogsOutThenDeletesTheAttachment() {
    seed("available", false);
    attacher().attach("vol-9", false);
    cinder.clearLog();

    Attacher.Detached d = attacher().detach("vol-9", null, false);

    assertThat(d.attachmentId()).isEqualTo("att-1");
    assertThat(cinder.log())
        .containsExactlyElementsOf(
            log(
                "getVolume vol-9",
                "listAttachments vol-9",
                "getAttachment att-1",
                "LOGOUT",
                "deleteAttachment att-1"));
    assertThat(cinder.volumes().get("vol-9").status()).isEqualTo("available");
    assertThat(attacher().detach("vol-9", null, false).attachmentId())
        .as("a second detach finds nothing to do")
        .isNull();
  }

  /**
   * Many arrays export every volume of a host through one target: another volume's LUN on the same
   * session means no logout (it would take that volume's device away too), on the detach and on the
   * undo of a failed attach alike; the attachment still goes, and the user is told.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "another LUN of the target in use: the session stays | lun-2 | false",
        "its partition does not count as another LUN | lun-1-part1 | true",
        "another target's LUN does not count | OTHER | true"
      })
  void aSessionOtherVolumesUseIsNotLoggedOut(String name, String link, boolean logsOut) {
    seed("available", false);
    attacher().attach("vol-9", false);
    String prefix = "ip-127.0.0.1:3260-iscsi-iqn.2010-10.org.openstack:volume-x-";
    host.otherLinks.add(
        link.equals("OTHER")
            ? "ip-127.0.0.1:3260-iscsi-iqn.2010-10.org.openstack:volume-y-lun-2"
            : prefix + link);
    cinder.clearLog();
    said.clear();

    attacher().detach("vol-9", null, false);

    assertThat(cinder.log())
        .containsExactlyElementsOf(
            log(
                "getVolume vol-9",
                "listAttachments vol-9",
                "getAttachment att-1",
                logsOut ? "LOGOUT" : "deleteAttachment att-1",
                logsOut ? "deleteAttachment att-1" : null));
    if (!logsOut) {
      assertThat(said)
          .anyMatch(
              l ->
                  l.contains(
                      "the session to iqn.2010-10.org.openstack:volume-x stays logged in at"
                          + " 127.0.0.1:3260 (LUN 2): other volumes of this host use the same"
                          + " target"));
    }
    assertThat(cinder.volumes().get("vol-9").status()).isEqualTo("available");
  }

  @Test
  void aLegacyDetachExportsAgainToLearnTheTargetThenTerminatesAndDetaches() {
    cinder.microversion(new Microversion(3, 0));
    seed("available", false);
    attacher().attach("vol-9", false);
    cinder.clearLog();

    attacher().detach("vol-9", null, false);

    assertThat(cinder.log())
        .containsExactlyElementsOf(
            log(
                "getVolume vol-9",
                "listAttachments vol-9",
                "initializeConnection vol-9",
                "LOGOUT",
                "terminateConnection vol-9",
                "markDetached vol-9"));
    assertThat(cinder.volumes().get("vol-9").status()).isEqualTo("available");
  }

  /** Detaches that are refused, or forced; rows: what stands in the way, then the outcome. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          the device is mounted                | mounted   | false | refused  | device " + DEVICE + " is in use (mounted at /mnt): stop using it first
          the device is mounted, forced        | mounted   | true  | detached | device " + DEVICE + " is in use (mounted at /mnt)
          the logout fails                     | --logout  | false | refused  | failed with exit code 8
          the logout fails, forced             | --logout  | true  | detached | failed with exit code 8
          only another host's attachment       | other     | false | refused  | none of the attachments of volume vol-9 is this host's (host1): att-1 (host2)
          an attachment id that is not the volume's | wrong-id | false | refused | volume vol-9 has no attachment att-7 (its attachments: att-1)
          """)
  void aDetachInTheWayIsRefusedUnlessForced(
      String name, String obstacle, boolean force, String outcome, String why) {
    seed("available", false);
    attacher(obstacle.equals("other") ? "host2" : "host1").attach("vol-9", false);
    switch (obstacle) {
      case "mounted" -> host.usedBy = "mounted at /mnt";
      case "--logout" -> host.failing("--logout", 8);
      default -> {}
    }
    String reason = why.replace("\" + DEVICE + \"", DEVICE);
    String id = obstacle.equals("wrong-id") ? "att-7" : null;

    if (outcome.equals("refused")) {
      assertThatThrownBy(() -> attacher().detach("vol-9", id, force)).hasMessageContaining(reason);
      assertThat(cinder.attachments()).containsKey("att-1");
      assertThat(cinder.volumes().get("vol-9").status()).isEqualTo("in-use");
    } else {
      Attacher.Detached d = attacher().detach("vol-9", id, force);
      assertThat(d.skipped()).anyMatch(s -> s.contains(reason));
      assertThat(cinder.attachments()).isEmpty();
      assertThat(cinder.volumes().get("vol-9").status()).isEqualTo("available");
    }
  }

  @Test
  void twoAttachmentsOfThisHostNeedAnAttachmentId() {
    seed("available", true);
    attacher().attach("vol-9", false);
    // a second one of the same host, as another tool might make
    cinder.createAttachment("vol-9", new Connector("iqn.x:host1", "host1", "10.1.1.1", false));
    cinder.completeAttachment("att-2");

    assertThatThrownBy(() -> attacher().detach("vol-9", null, false))
        .hasMessageContaining("has 2 attachments of volume vol-9: att-1, att-2")
        .hasMessageContaining("--attachment-id");
    attacher().detach("vol-9", "att-2", false);
    assertThat(cinder.attachments()).containsOnlyKeys("att-1");
  }
}
