package org.standalonecinder.provisioner.cli;

import java.io.PrintWriter;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.standalonecinder.provisioner.cinder.ApiVersions;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.ExportPath;
import org.standalonecinder.provisioner.cinder.Microversion;
import org.standalonecinder.provisioner.cinder.Pool;
import org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig;
import org.standalonecinder.provisioner.cinder.openstack.config.ConfigException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The first thing an admin runs: configuration, authentication, catalog endpoint, API versions, a
 * project-scoped call, snapshots and the pools, each step on its own line. The exit code names the
 * first step that failed.
 */
@Command(
    name = "check",
    mixinStandardHelpOptions = true,
    description = "Check the cloud configuration against Cinder, step by step.",
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:all checks passed",
      "2:the configuration is invalid",
      "3:the credentials were refused (401)",
      "4:the cloud does not fit the configuration (catalog, TLS, project, API version)",
      "5:Cinder or Keystone did not answer"
    })
final class CheckCommand implements Callable<Integer> {

  static final int OK = 0;
  static final int BAD_CONFIG = 2;
  static final int REFUSED = 3;
  static final int MISMATCH = 4;
  static final int UNREACHABLE = 5;

  @Spec CommandSpec spec;

  @Mixin CloudConfigOption cloud = new CloudConfigOption();

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    CloudConfig cfg;
    try {
      cfg = cloud.load();
    } catch (ConfigException e) {
      out.println("configuration   FAIL  " + e.getMessage());
      return BAD_CONFIG;
    }
    out.println("configuration   ok    " + cfg.auth());
    for (String line : cfg.describe()) {
      out.println("                      " + line);
    }
    try (OpenStackCinderClient cinder = OpenStackCinderClient.create(cfg)) {
      URI endpoint = step(out, "authentication", cinder::endpoint);
      out.println("endpoint        ok    " + endpoint);
      ApiVersions v = step(out, "api versions", cinder::apiVersions);
      out.println(
          "api versions    ok    server "
              + v.min()
              + " .. "
              + v.max()
              + ", using "
              + v.used()
              + " (exports through "
              + ExportPath.of(v.used(), false).describe()
              + ")");
      int n = step(out, "project", () -> cinder.findVolumes(null, Map.of()).size());
      out.println("project         ok    " + n + " volume(s) visible");
      optional(out, cinder, v);
      return OK;
    } catch (StepFailed f) {
      return f.code;
    } catch (CinderException e) {
      out.println("cinder          FAIL  " + e.getMessage());
      return exitCode(e);
    }
  }

  /**
   * What provisioning works without, each a warning when this project may not see it: snapshots,
   * backups and the pools (admin-only).
   */
  private static void optional(PrintWriter out, OpenStackCinderClient cinder, ApiVersions v) {
    try {
      int snapshots = cinder.findSnapshots(null, Map.of()).size();
      out.println(
          "snapshots       ok    "
              + snapshots
              + " snapshot(s) visible; a volume in use is snapshotted "
              + (v.used().atLeast(Microversion.SNAPSHOT_IN_USE)
                  ? "as it is (3.66 and later)"
                  : "with force (below 3.66)")
              + ", crash-consistent");
    } catch (CinderException.Forbidden e) {
      out.println(
          "snapshots       WARN  "
              + e.getMessage()
              + " (this project may not list snapshots: snapshots of its claims would fail;"
              + " provisioning works without them)");
    }
    try {
      int backups = cinder.findBackups(null, Map.of()).size();
      out.println(
          "backups         ok    "
              + backups
              + " backup(s) visible; "
              + (v.used().atLeast(Microversion.VOLUME_FROM_BACKUP)
                  ? "a volume is made from a backup (3.47 and later)"
                  : "a volume cannot be made from a backup below 3.47: restores from backups"
                      + " would fail"));
    } catch (CinderException.Forbidden e) {
      out.println(
          "backups         WARN  "
              + e.getMessage()
              + " (this project may not list backups: backups of its claims would fail;"
              + " provisioning works without them)");
    }
    try {
      List<Pool> pools = cinder.pools();
      out.println("pools           ok    " + pools.size() + " pool(s)");
      for (Pool p : pools) {
        out.printf(
            "                      %s  protocol %s  total %s  free %s%n",
            p.name(), p.storageProtocol(), p.total(), p.free());
      }
    } catch (CinderException.Forbidden e) {
      out.println(
          "pools           WARN  "
              + e.getMessage()
              + " (get_pools is admin-only; provisioning works without it)");
    }
  }

  private <T> T step(PrintWriter out, String name, Callable<T> c) {
    try {
      return c.call();
    } catch (CinderException e) {
      out.printf("%-15s FAIL  %s%n", name, e.getMessage());
      throw new StepFailed(exitCode(e));
    } catch (Exception e) {
      out.printf("%-15s FAIL  %s%n", name, e);
      throw new StepFailed(UNREACHABLE);
    }
  }

  static int exitCode(CinderException e) {
    if (e instanceof CinderException.Unauthorized) {
      return REFUSED;
    }
    return e instanceof CinderException.Unavailable ? UNREACHABLE : MISMATCH;
  }

  private static final class StepFailed extends RuntimeException {
    final int code;

    StepFailed(int code) {
      super(null, null, false, false);
      this.code = code;
    }
  }
}
