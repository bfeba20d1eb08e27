package org.standalonecinder.provisioner.host;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ISCSIPersistentVolumeSource;
import io.fabric8.kubernetes.api.model.ISCSIPersistentVolumeSourceBuilder;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.provisioner.mapping.IscsiMapper;

class OpenIscsiTest {

  static final String IQN = "iqn.2010-10.org.openstack:volume-1";
  static final Map<String, String> CHAP =
      Map.of(IscsiMapper.SESSION_USER, "u1", IscsiMapper.SESSION_PASSWORD, "s3cr3t-chap");

  static ISCSIPersistentVolumeSource export(boolean chap, String... otherPortals) {
    return new ISCSIPersistentVolumeSourceBuilder()
        .withTargetPortal("10.0.0.1:3260")
        .withPortals(List.of(otherPortals))
        .withIqn(IQN)
        .withLun(1)
        .withChapAuthSession(chap)
        .build();
  }

  static final String NODE = "iscsiadm -m node -T " + IQN + " -p ";

  @Test
  void aChapLoginIsTheCommandsOsBrickRuns() {
    assertThat(OpenIscsi.login(export(true), CHAP, false).stream().map(Command::shown))
        .containsExactly(
            NODE + "10.0.0.1:3260 --interface default --op new",
            NODE
                + "10.0.0.1:3260 --interface default --op update -n node.session.auth.authmethod -v CHAP",
            NODE
                + "10.0.0.1:3260 --interface default --op update -n node.session.auth.username -v u1",
            NODE
                + "10.0.0.1:3260 --interface default --op update -n node.session.auth.password -v ***",
            NODE + "10.0.0.1:3260 --interface default --login",
            NODE + "10.0.0.1:3260 --interface default --op update -n node.startup -v automatic");
  }

  @Test
  void theSecretIsRunButNeverShown() {
    var login = OpenIscsi.login(export(true), CHAP, false);
    assertThat(login.get(3).argv()).endsWith("s3cr3t-chap");
    assertThat(login.toString()).doesNotContain("s3cr3t-chap");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "one portal, no multipath | false | 10.0.0.2:3260 | 10.0.0.1:3260",
        "multipath: every portal of the LUN | true | 10.0.0.2:3260 | 10.0.0.1:3260 10.0.0.2:3260",
        "multipath with no other portal | true | | 10.0.0.1:3260"
      })
  void multipathLogsInToEveryPortal(String name, boolean multipath, String others, String portals) {
    var s = others == null ? export(false) : export(false, others);
    List<String> want = List.of(portals.split(" "));
    assertThat(OpenIscsi.portals(s, multipath)).isEqualTo(want);
    assertThat(OpenIscsi.login(s, Map.of(), multipath))
        .as("no CHAP: new, login, startup per portal")
        .hasSize(3 * want.size());
    assertThat(OpenIscsi.logout(s, multipath)).hasSize(3 * want.size());
  }

  @Test
  void aLogoutCanBeRepeatedAndALoginThatExistsIsDone() {
    var logout = OpenIscsi.logout(export(true), false);
    assertThat(logout.stream().map(Command::shown))
        .containsExactly(
            NODE + "10.0.0.1:3260 --interface default --op update -n node.startup -v manual",
            NODE + "10.0.0.1:3260 --interface default --logout",
            NODE + "10.0.0.1:3260 --interface default --op delete");
    assertThat(logout).allSatisfy(c -> assertThat(c.alsoOk()).isEqualTo(Set.of(21)));
    assertThat(OpenIscsi.login(export(false), Map.of(), false).get(1).alsoOk())
        .isEqualTo(Set.of(15));
  }

  @Test
  void theDeviceIsUdevsPathName() {
    assertThat(OpenIscsi.device(export(false), "10.0.0.1:3260"))
        .isEqualTo("/dev/disk/by-path/ip-10.0.0.1:3260-iscsi-" + IQN + "-lun-1");
  }
}
