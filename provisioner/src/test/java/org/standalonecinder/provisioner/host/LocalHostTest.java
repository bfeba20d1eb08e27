package org.standalonecinder.provisioner.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class LocalHostTest {

  @TempDir Path dir;

  /**
   * A device (a file standing in for {@code /dev/sdx}) and what uses it, laid out in a {@code proc}
   * and {@code sys} of the test's own.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          nothing uses it             | none           | -
          it is mounted               | mount sdx      | mounted at /srv/data
          a partition is mounted      | mount sdx1     | mounted at /srv/data
          another device is mounted   | mount sdy      | -
          device-mapper holds it      | holder sdx     | held by dm-0
          device-mapper holds a part  | holder sdx1    | held by dm-0
          """)
  void whatUsesADevice(String name, String use, String expected) throws IOException {
    Path dev = Files.createDirectories(dir.resolve("dev"));
    for (String d : new String[] {"sdx", "sdx1", "sdy"}) {
      Files.createFile(dev.resolve(d));
    }
    Path root = dir.resolve("root");
    Path block = Files.createDirectories(root.resolve("sys/class/block/sdx"));
    Files.createDirectories(block.resolve("holders"));
    Files.createDirectories(block.resolve("sdx1/holders"));
    Files.createDirectories(root.resolve("proc/self"));
    StringBuilder mounts = new StringBuilder("proc /proc proc rw 0 0\n");
    String[] u = use.split(" ");
    if (u[0].equals("mount")) {
      mounts.append(dev.resolve(u[1])).append(" /srv/data ext4 rw 0 0\n");
    } else if (u[0].equals("holder")) {
      Path holders = u[1].equals("sdx") ? block.resolve("holders") : block.resolve("sdx1/holders");
      Files.createFile(holders.resolve("dm-0"));
    }
    Files.writeString(root.resolve("proc/self/mounts"), mounts);

    LocalHost host = new LocalHost(root, Duration.ofSeconds(5));

    assertThat(host.usedBy(dev.resolve("sdx").toString()).orElse("-")).isEqualTo(expected);
  }

  /** The device links of a folder, under the host's root; none for a folder that is not there. */
  @Test
  void theLinksOfAFolderAreListedInOrder() throws IOException {
    Path root = dir.resolve("root");
    Path byPath = Files.createDirectories(root.resolve("dev/disk/by-path"));
    Files.createFile(byPath.resolve("ip-127.0.0.1:3260-iscsi-iqn.2010-10.org.x:v-lun-2"));
    Files.createFile(byPath.resolve("ip-127.0.0.1:3260-iscsi-iqn.2010-10.org.x:v-lun-1"));
    LocalHost host = new LocalHost(root, Duration.ofSeconds(5));

    assertThat(host.list("/dev/disk/by-path"))
        .containsExactly(
            "ip-127.0.0.1:3260-iscsi-iqn.2010-10.org.x:v-lun-1",
            "ip-127.0.0.1:3260-iscsi-iqn.2010-10.org.x:v-lun-2");
    assertThat(host.list("/dev/disk/by-id")).isEmpty();
  }

  @Test
  void aCommandsExitAndOutputAreReturned() {
    Host.Result r =
        new LocalHost(dir, Duration.ofSeconds(10))
            .run(Command.of("sh", "-c", "echo out; echo err >&2; exit 21"));
    assertThat(r.exit()).isEqualTo(21);
    assertThat(r.output()).isEqualTo("out\nerr");
  }

  @Test
  void aCommandThatHangsWithItsOutputOpenIsEndedAtItsTimeout() {
    long start = System.nanoTime();
    assertThatThrownBy(
            () ->
                new LocalHost(dir, Duration.ofMillis(300))
                    .run(Command.of("sh", "-c", "echo started; sleep 30")))
        .isInstanceOf(HostException.class)
        .hasMessageContaining("did not end within 300 ms");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          open-iscsi's tool missing  | /nonexistent/iscsiadm          | /nonexistent/iscsiadm cannot be run (| : install open-iscsi
          ceph-common's tool missing | /nonexistent/rbd               | /nonexistent/rbd cannot be run (     | : install ceph-common
          a tool of no known package | no-such-tool-standalone-cinder | no-such-tool-standalone-cinder cannot be run ( | )
          """)
  void aMissingProgramSaysWhichPackageBringsIt(
      String name, String program, String start, String end) {
    assertThatThrownBy(() -> new LocalHost(dir, Duration.ofSeconds(5)).run(Command.of(program)))
        .isInstanceOf(HostException.class)
        .hasMessageStartingWith(start)
        .hasMessageEndingWith(end);
  }
}
