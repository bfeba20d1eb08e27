package org.standalonecinder.provisioner.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.standalonecinder.provisioner.cinder.Backoff;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.cinder.VolumeSpec;
import org.standalonecinder.provisioner.cinder.openstack.LocalCinder;
import org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfigLoader;
import org.standalonecinder.provisioner.host.LocalHost;
import picocli.CommandLine;

/**
 * {@code cinder attach} and {@code detach} as a user runs them, against the real Cinder and this
 * machine's real iscsiadm. The machine has open-iscsi's tools but no iscsid and no kernel
 * initiator, so the login itself fails: what is tested is that Cinder's attachment is made, the
 * real iscsiadm takes every command up to the login, and everything is undone (node record deleted,
 * attachment deleted, volume available).
 */
class AttachCommandIT {

  @TempDir Path dir;

  Path cloudConf() throws IOException {
    Map<String, String> e = LocalCinder.env();
    return Files.writeString(
        dir.resolve("cloud.conf"),
        "[Global]\ncinder-endpoint = "
            + e.get("CINDER_ENDPOINT")
            + "\ntenant-id = "
            + e.get("CINDER_PROJECT_ID")
            + "\n");
  }

  Path hostRoot() throws IOException {
    Path etc = Files.createDirectories(dir.resolve("host/etc/iscsi"));
    Files.writeString(
        etc.resolve("initiatorname.iscsi"),
        "InitiatorName=iqn.2026-11.org.standalonecinder:attach-cli-it\n");
    return dir.resolve("host");
  }

  record Run(int exit, String out, String err) {}

  Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code =
        new CommandLine(new Main())
            .setOut(new PrintWriter(out, true))
            .setErr(new PrintWriter(err, true))
            .execute(args);
    return new Run(code, out.toString(), err.toString());
  }

  @Test
  void aLoginThatFailsOnThisHostIsUndoneAndCinderIsLeftAsItWas() throws Exception {
    assumeTrue(LocalHost.machine().privileged(), "iscsiadm's node records are root's");
    assumeTrue(
        LocalHost.machine()
                .run(org.standalonecinder.provisioner.host.Command.of("iscsiadm", "-V"))
                .exit()
            == 0,
        "open-iscsi's iscsiadm is installed");
    Path conf = cloudConf();
    withVolume(
        conf,
        "attach-cli-it",
        (c, v) -> {
          String iqn = "iqn.2010-10.org.openstack:volume-" + v.id();

          long start = System.nanoTime();
          Run r =
              run(
                  "cinder",
                  "attach",
                  v.id(),
                  "--cloud-config",
                  conf.toString(),
                  "--host-root",
                  hostRoot().toString(),
                  "--host-name",
                  "attach-cli-it",
                  "--device-timeout",
                  "PT5S");

          assertThat(r.exit()).as(r.err()).isEqualTo(AttachCommand.HOST);
          assertThat(r.out()).as("no device is printed").isEmpty();
          assertThat(r.err())
              .contains("cinder: create a rw attachment of volume " + v.id() + " for attach-cli-it")
              .contains("run: iscsiadm -m node -T " + iqn)
              .contains("--op update -n node.session.auth.password -v ***")
              .contains("--login' failed with exit code")
              .contains("undo: log out")
              .contains("undo: delete attachment");
          assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMinutes(3));
          Volume after = c.getVolume(v.id()).orElseThrow();
          assertThat(after.status()).isEqualTo("available");
          assertThat(c.listAttachments(v.id())).isEmpty();
          var records =
              LocalHost.machine()
                  .run(org.standalonecinder.provisioner.host.Command.of("iscsiadm", "-m", "node"));
          assertThat(records.output()).as("the node record is deleted").doesNotContain(iqn);

          Run d =
              run(
                  "cinder",
                  "detach",
                  v.id(),
                  "--cloud-config",
                  conf.toString(),
                  "--host-root",
                  hostRoot().toString(),
                  "--host-name",
                  "attach-cli-it");
          assertThat(d.exit()).as(d.err()).isZero();
          assertThat(d.err()).contains("is not attached: nothing to do");
        });
  }

  /**
   * A SIGTERM (what Ctrl-C and {@code kill} send; a shell's background job ignores SIGINT) while
   * the login runs: the attach is interrupted, its steps are undone at once, and Cinder is left as
   * it was. The login is an iscsiadm stand-in on the PATH that hangs there, as one does against a
   * portal that never answers.
   */
  @Test
  void aTerminatedAttachIsUndoneBeforeTheProgramEnds() throws Exception {
    assumeTrue(LocalHost.machine().privileged(), "the attach needs root");
    Path jar = Path.of("target/standalone-cinder-provisioner.jar");
    assumeTrue(Files.exists(jar), "the executable jar is built (mvn package)");
    Path bin = Files.createDirectories(dir.resolve("bin"));
    Path fake = bin.resolve("iscsiadm");
    Files.writeString(fake, "#!/bin/sh\ncase \"$*\" in *--login*) exec sleep 120;; esac\nexit 0\n");
    fake.toFile().setExecutable(true);
    Path conf = cloudConf();
    withVolume(
        conf,
        "attach-cli-term",
        (c, v) -> {
          Path err = dir.resolve("attach.err");
          ProcessBuilder pb =
              new ProcessBuilder(
                      Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                      "-jar",
                      jar.toString(),
                      "cinder",
                      "attach",
                      v.id(),
                      "--cloud-config",
                      conf.toString(),
                      "--host-root",
                      hostRoot().toString())
                  .redirectError(err.toFile())
                  .redirectOutput(dir.resolve("attach.out").toFile());
          pb.environment().put("PATH", bin + ":" + System.getenv("PATH"));
          Process p = pb.start();
          // A separate JVM that asks keystone and Cinder first: while the other integration
          // classes and the e2e parts' start load the machine, that took past 60 s in two runs
          // (alone: 10 s). The row is about what a SIGTERM undoes, not about speed.
          long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
          while (!(Files.exists(err) && Files.readString(err).contains("--login"))) {
            assertThat(System.nanoTime()).as("the login started").isLessThan(deadline);
            assertThat(p.isAlive()).as("the attach is running").isTrue();
            Thread.sleep(100);
          }
          assertThat(c.getVolume(v.id()).orElseThrow().status()).isEqualTo("attaching");

          long signalled = System.nanoTime();
          p.destroy();
          assertThat(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();

          assertThat(Duration.ofNanos(System.nanoTime() - signalled))
              .as("ended without waiting for the hung login")
              .isLessThan(Duration.ofSeconds(20));
          assertThat(p.exitValue()).isEqualTo(143);
          assertThat(Files.readString(err))
              .contains("undo: log out")
              .contains("undo: delete attachment")
              .contains("interrupted while");
          assertThat(c.getVolume(v.id()).orElseThrow().status()).isEqualTo("available");
          assertThat(c.listAttachments(v.id())).isEmpty();
        });
  }

  /** What a test does with a Cinder client and an available volume of its own. */
  interface VolumeTest {
    void run(CinderClient c, Volume v) throws Exception;
  }

  /** Runs the test with a new volume, and deletes it (attachments first) whatever happened. */
  static void withVolume(Path conf, String prefix, VolumeTest test) throws Exception {
    try (CinderClient c = OpenStackCinderClient.create(CloudConfigLoader.load(conf, Map.of()))) {
      Volume v = c.createVolume(VolumeSpec.blank(prefix + "-" + UUID.randomUUID(), 1));
      try {
        c.awaitVolumeStatus(v.id(), Set.of("available"), Backoff.DEFAULT);
        test.run(c, v);
      } finally {
        c.listAttachments(v.id()).forEach(a -> c.deleteAttachment(a.id()));
        c.deleteVolume(v.id());
      }
    }
  }
}
