package org.standalonecinder.provisioner.diagnostics;

import io.fabric8.kubernetes.api.model.ISCSIPersistentVolumeSource;
import io.fabric8.kubernetes.api.model.Secret;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.standalonecinder.provisioner.mapping.IscsiMapper;

/**
 * A user-space iSCSI initiator (libiscsi through {@code qemu-io}, Debian's qemu-utils and
 * qemu-block-extra), standing in for a node's kubelet: it logs in with a PV's initiator name and
 * CHAP credentials. The demo and the integration tests use it where no kernel initiator exists. The
 * CHAP secret goes to qemu in a 0600 file, never on its command line.
 */
public final class IscsiProbe {

  /** The result of one qemu-io run. */
  public record Result(int exit, String output) {
    public boolean ok() {
      return exit == 0 && !output.contains("Pattern verification failed");
    }
  }

  private IscsiProbe() {}

  /**
   * Where and as whom a node logs in.
   *
   * @param user CHAP user, or null without CHAP
   * @param password CHAP secret, or null
   */
  public record Target(
      String portal, String iqn, int lun, String initiator, String user, String password) {

    /** The target as a PV's {@code spec.iscsi} and its CHAP Secret (or null) describe it. */
    public static Target of(ISCSIPersistentVolumeSource iscsi, Secret chap) {
      return new Target(
          iscsi.getTargetPortal(),
          iscsi.getIqn(),
          iscsi.getLun(),
          iscsi.getInitiatorName(),
          chap == null ? null : value(chap, IscsiMapper.SESSION_USER),
          chap == null ? null : value(chap, IscsiMapper.SESSION_PASSWORD));
    }

    public Target withPassword(String other) {
      return new Target(portal, iqn, lun, initiator, user, other);
    }

    /** Runs qemu-io commands (e.g. {@code write -P 0x5a 0 1M}) against the LUN. */
    public Result io(String... commands) throws IOException, InterruptedException {
      return IscsiProbe.io(portal, iqn, lun, initiator, user, password, commands);
    }

    /**
     * Marks a LUN of {@code size} bytes at both ends, for {@link #grownKeepingEnds} once it grew:
     * the bytes that must survive a growth.
     */
    public Result markEnds(long size) throws IOException, InterruptedException {
      return io("write -P 0x5a 0 1M", "write -P 0xc3 " + (size - 4096) + " 4k");
    }

    /**
     * After a growth from {@code oldSize}: the marks of {@link #markEnds} are still there, and the
     * LUN takes a write half a GiB past its old end (refused before the growth).
     */
    public Result grownKeepingEnds(long oldSize) throws IOException, InterruptedException {
      long past = oldSize + (512L << 20);
      return io(
          "read -P 0x5a 0 1M",
          "read -P 0xc3 " + (oldSize - 4096) + " 4k",
          "write -P 0x77 " + past + " 4k",
          "read -P 0x77 " + past + " 4k");
    }

    /** A Secret's value, from {@code data} (base64, as an API server keeps it) or stringData. */
    private static String value(Secret s, String key) {
      if (s.getData() != null && s.getData().containsKey(key)) {
        return new String(Base64.getDecoder().decode(s.getData().get(key)), StandardCharsets.UTF_8);
      }
      return s.getStringData() == null ? null : s.getStringData().get(key);
    }
  }

  private static Result io(
      String portal,
      String iqn,
      int lun,
      String initiator,
      String user,
      String password,
      String... commands)
      throws IOException, InterruptedException {
    Path secret =
        Files.createTempFile(
            "chap",
            ".txt",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    try {
      List<String> cmd = new ArrayList<>(List.of("qemu-io"));
      StringBuilder opts =
          new StringBuilder("driver=iscsi,transport=tcp,portal=")
              .append(portal)
              .append(",target=")
              .append(iqn)
              .append(",lun=")
              .append(lun)
              .append(",initiator-name=")
              .append(initiator);
      if (user != null) {
        Files.writeString(secret, password);
        cmd.addAll(List.of("--object", "secret,id=chap,file=" + secret));
        opts.append(",user=").append(user).append(",password-secret=chap");
      }
      cmd.addAll(List.of("--image-opts", opts.toString()));
      for (String c : commands) {
        cmd.addAll(List.of("-c", c));
      }
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return new Result(-1, out + " (timed out)");
      }
      return new Result(p.exitValue(), out);
    } finally {
      Files.deleteIfExists(secret);
    }
  }
}
