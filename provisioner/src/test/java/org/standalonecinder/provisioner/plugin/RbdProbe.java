package org.standalonecinder.provisioner.plugin;

import static org.junit.jupiter.api.Assertions.fail;

import io.fabric8.kubernetes.api.model.Secret;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.standalonecinder.provisioner.cinder.openstack.LocalCinder;

/**
 * A node's view of an RBD image, through librbd in user space ({@code qemu-io} with an {@code rbd}
 * image): monitors, pool, image, user and key exactly as a PV and its Secret give them, nothing
 * from the lab's ceph.conf. And the Ceph side ({@code rbd ls}) with the lab's own configuration.
 *
 * @param monitors {@code host:port} each
 * @param pool the pool
 * @param image the image
 * @param user the Ceph user, without {@code client.}
 * @param key the cephx key (base64, as Ceph prints it)
 */
record RbdProbe(List<String> monitors, String pool, String image, String user, String key) {

  /** What qemu-io printed, and whether every command ran. */
  record Result(boolean ok, String output) {}

  RbdProbe withKey(String other) {
    return new RbdProbe(monitors, pool, image, user, other);
  }

  /** A value of a Secret as the API server stores it ({@code data}), or as it was sent. */
  static String value(Secret s, String key) {
    if (s.getData() != null && s.getData().get(key) != null) {
      return new String(Base64.getDecoder().decode(s.getData().get(key)), StandardCharsets.UTF_8);
    }
    return s.getStringData() == null ? null : s.getStringData().get(key);
  }

  /** Runs the qemu-io commands ({@code write -P 0x5a 0 1M}, {@code read -P 0x5a 0 1M}...). */
  Result io(String... commands) throws IOException, InterruptedException {
    StringBuilder opts =
        new StringBuilder("driver=rbd,pool=" + pool + ",image=" + image + ",user=" + user);
    for (int i = 0; i < monitors.size(); i++) {
      String m = monitors.get(i);
      int colon = m.lastIndexOf(':');
      String host = m.substring(0, colon).replace("[", "").replace("]", "");
      opts.append(",server.").append(i).append(".host=").append(host);
      opts.append(",server.").append(i).append(".port=").append(m.substring(colon + 1));
    }
    opts.append(",key-secret=cephx0");
    List<String> argv = new ArrayList<>();
    argv.add("qemu-io");
    argv.add("--object");
    argv.add("secret,id=cephx0,format=base64,data=" + key);
    argv.add("--image-opts");
    argv.add(opts.toString());
    for (String c : commands) {
      argv.add("-c");
      argv.add(c);
    }
    Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return new Result(false, "timed out: " + out);
    }
    // qemu-io exits 0 even when it cannot open the image; every command must have answered.
    boolean ok =
        p.exitValue() == 0
            && !out.contains("can't open")
            && !out.contains("Pattern verification failed")
            && !out.contains("failed:")
            && out.lines().filter(l -> l.startsWith("read ") || l.startsWith("wrote ")).count()
                == java.util.Arrays.stream(commands)
                    .filter(c -> c.startsWith("read ") || c.startsWith("write "))
                    .count();
    return new Result(ok, out);
  }

  /** The lab's env, or a failure that says how to start a Cinder with Ceph. */
  static Map<String, String> lab() {
    Map<String, String> env = LocalCinder.env();
    if (env.get("CEPH_CONF") == null) {
      fail(
          "the local Cinder runs without Ceph (CINDER_BACKEND="
              + env.get("CINDER_BACKEND")
              + "): start it with dev/cinder-local/start.sh --backend file,rbd (dev/test.sh does)");
    }
    return env;
  }

  /** The cephx key of the user Cinder uses, from the lab's keyring. */
  static String labKey() throws IOException {
    for (String line : Files.readAllLines(Path.of(lab().get("CEPH_CINDER_KEYRING")))) {
      String t = line.trim();
      if (t.startsWith("key")) {
        return t.substring(t.indexOf('=') + 1).trim();
      }
    }
    throw new IllegalStateException("no key in " + lab().get("CEPH_CINDER_KEYRING"));
  }

  /** The v1 monitor addresses Ceph serves, from the lab's ceph.conf {@code mon_host}. */
  static List<String> labMonitors() throws IOException {
    List<String> out = new ArrayList<>();
    for (String line : Files.readAllLines(Path.of(lab().get("CEPH_CONF")))) {
      String t = line.trim();
      if (t.startsWith("mon_host")) {
        for (String addr : t.substring(t.indexOf('=') + 1).split("[,\\[\\] ]")) {
          if (addr.startsWith("v1:")) {
            out.add(addr.substring(3));
          }
        }
      }
    }
    return out;
  }

  /** The images of a pool, as Ceph lists them. */
  static List<String> images(String pool) throws IOException, InterruptedException {
    return rbd("ls", "-p", pool).lines().map(String::trim).filter(l -> !l.isEmpty()).toList();
  }

  /** An image's features, as {@code rbd info} lists them. */
  static List<String> features(String pool, String image) throws IOException, InterruptedException {
    return rbd("info", pool + "/" + image)
        .lines()
        .map(String::trim)
        .filter(l -> l.startsWith("features:"))
        .flatMap(l -> java.util.Arrays.stream(l.substring("features:".length()).split(",")))
        .map(String::trim)
        .filter(f -> !f.isEmpty())
        .toList();
  }

  /** The {@code rbd} tool as Cinder's Ceph user; its output, or an exception when it fails. */
  private static String rbd(String... args) throws IOException, InterruptedException {
    Map<String, String> env = lab();
    List<String> cmd =
        new java.util.ArrayList<>(
            List.of(
                "rbd",
                "-c",
                env.get("CEPH_CONF"),
                "--id",
                env.get("CEPH_CLIENT_ID"),
                "--keyring",
                env.get("CEPH_CINDER_KEYRING")));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException("rbd " + String.join(" ", args) + " failed: " + out);
    }
    return out;
  }
}
