package org.standalonecinder.provisioner.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.standalonecinder.provisioner.cinder.Capacity;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.Pool;
import org.standalonecinder.provisioner.cinder.openstack.OpenStackCinderClient;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig;
import org.standalonecinder.provisioner.cinder.openstack.config.ConfigException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The capacity of Cinder's pools, as the provisioner's metrics report it: one line per pool with
 * total, free, allocated and provisioned GiB and the over-subscription ratio.
 */
@Command(
    name = "pools",
    mixinStandardHelpOptions = true,
    description = "Print the capacity of Cinder's pools (the numbers behind the pool metrics).",
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:listed",
      "2:the configuration is invalid",
      "3:the credentials were refused (401)",
      "4:Cinder refused the listing (get_pools is admin-only by default) or does not fit",
      "5:Cinder or Keystone did not answer"
    })
final class PoolsCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin CloudConfigOption cloud = new CloudConfigOption();

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    CloudConfig cfg;
    try {
      cfg = cloud.load();
    } catch (ConfigException e) {
      out.println("configuration: " + e.getMessage());
      return CheckCommand.BAD_CONFIG;
    }
    try (OpenStackCinderClient cinder = OpenStackCinderClient.create(cfg)) {
      format(cinder.pools()).forEach(out::println);
      return CheckCommand.OK;
    } catch (CinderException e) {
      out.println("cannot list the pools: " + e.getMessage());
      return CheckCommand.exitCode(e);
    }
  }

  /** The table: a header and one line per pool, columns aligned. */
  static List<String> format(List<Pool> pools) {
    List<String[]> rows = new ArrayList<>();
    rows.add(
        new String[] {
          "POOL", "PROTOCOL", "TOTAL", "FREE", "ALLOCATED", "PROVISIONED", "OVERSUB", "FREE%"
        });
    for (Pool p : pools) {
      rows.add(
          new String[] {
            p.name(),
            String.valueOf(p.storageProtocol()),
            gib(p.total()),
            gib(p.free()),
            gib(p.allocated()),
            gib(p.provisioned()),
            p.maxOverSubscriptionRatio() == null
                ? "-"
                : String.format(Locale.ROOT, "%.1f", p.maxOverSubscriptionRatio()),
            freePercent(p)
          });
    }
    int[] width = new int[rows.get(0).length];
    for (String[] r : rows) {
      for (int i = 0; i < r.length; i++) {
        width[i] = Math.max(width[i], r[i].length());
      }
    }
    List<String> out = new ArrayList<>();
    for (String[] r : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < r.length; i++) {
        line.append(
            i == 0 ? String.format("%-" + width[i] + "s", r[i]) : "  " + pad(r[i], width[i]));
      }
      out.add(line.toString().stripTrailing());
    }
    if (pools.isEmpty()) {
      out.add("(Cinder reports no pool: is a cinder-volume service up?)");
    }
    return out;
  }

  private static String pad(String s, int w) {
    return " ".repeat(w - s.length()) + s;
  }

  private static String gib(Capacity c) {
    return c instanceof Capacity.Gib g
        ? String.format(Locale.ROOT, "%.2f GiB", g.value())
        : c.toString();
  }

  private static String freePercent(Pool p) {
    if (p.total() instanceof Capacity.Gib t
        && p.free() instanceof Capacity.Gib f
        && t.value() > 0) {
      return String.format(Locale.ROOT, "%.0f%%", 100 * f.value() / t.value());
    }
    return "-";
  }
}
