package org.standalonecinder.provisioner.node;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.standalonecinder.provisioner.host.HostException;

/**
 * The node's half of an expansion, pass by pass: every filesystem the kubelet mounted from an
 * iSCSI, FC or RBD PV of a Cinder volume is rescanned and grown to its device, and the claims of
 * those that grew are finished ({@link ClaimResizeCompletion}). The first pass grows every
 * filesystem and looks at every claim (one that grew before a restart is finished then); later
 * passes grow only where a device's size changed, and a claim whose PV or condition lags behind its
 * device is looked at again each pass until it is done. While no device grows a pass starts no
 * process and asks the API server nothing: it writes each device's rescan attribute and reads its
 * size. Each device is said when first seen (what is watched from then on) and when it grows.
 */
public final class NodeGrowth {

  /** What a pass left: PVs asked for that are not mounted here, and how many steps failed. */
  public record Pass(List<String> notMounted, int failed) {}

  private final Supplier<String> mountinfo;
  private final Supplier<List<KubeletMounts.Mount>> rawDevices;
  private final FilesystemGrower grower;
  private final ClaimResizeCompletion completion;
  private final Consumer<String> say;
  private final boolean sayAll;
  private final Set<String> toFinish = new LinkedHashSet<>();

  /** The size each device (by its numbers) was last grown to. */
  private final Map<String, Long> grown = new HashMap<>();

  /** The size each raw block device (by its numbers) had at the last pass. */
  private final Map<String, Long> raw = new HashMap<>();

  /**
   * Whether each PV mounted here (by device and name) is a Cinder volume's: only those are touched,
   * not an admin's own iSCSI, FC or RBD PVs. Looked up once per mount with the node's credentials;
   * without them (a one-off run by an admin) every PV asked for is.
   */
  private final Map<Mounted, Boolean> ours = new HashMap<>();

  private record Mounted(String majorMinor, String pvName) {}

  private boolean first = true;

  /**
   * @param mountinfo the host's mount table, read at each pass
   * @param rawDevices the raw block volumes the kubelet gave Pods, listed at each pass
   * @param completion finishes claims; null to grow filesystems only
   * @param say where what happened is told
   * @param sayAll whether filesystems that needed nothing are told too (a one-off run)
   */
  public NodeGrowth(
      Supplier<String> mountinfo,
      Supplier<List<KubeletMounts.Mount>> rawDevices,
      FilesystemGrower grower,
      ClaimResizeCompletion completion,
      Consumer<String> say,
      boolean sayAll) {
    this.mountinfo = mountinfo;
    this.rawDevices = rawDevices;
    this.grower = grower;
    this.completion = completion;
    this.say = say;
    this.sayAll = sayAll;
  }

  /**
   * One pass over the PVs named in {@code only}, or over all when it is empty.
   *
   * @throws HostException when the mount table cannot be read
   */
  public Pass pass(List<String> only) {
    Map<String, KubeletMounts.Mount> byDevice = new LinkedHashMap<>();
    Map<String, KubeletMounts.Mount> byRaw = new LinkedHashMap<>();
    Map<String, Integer> pods = new LinkedHashMap<>();
    Set<Mounted> seen = new HashSet<>();
    int unknown =
        select(KubeletMounts.parse(mountinfo.get()), only, byDevice, pods, seen)
            + select(rawDevices.get(), only, byRaw, pods, seen);
    ours.keySet().retainAll(seen);
    List<String> notMounted = new ArrayList<>();
    for (String pv : only) {
      if (seen.stream().noneMatch(m -> m.pvName().equals(pv))) {
        notMounted.add(pv);
      }
    }
    int failed = unknown + rescanRaw(byRaw, pods);
    Map<String, Long> devices = new LinkedHashMap<>();
    for (KubeletMounts.Mount m : byDevice.values()) {
      try {
        long size = grower.rescan(m);
        if (!first && Long.valueOf(size).equals(grown.get(m.majorMinor()))) {
          // Grown to this size before: no process started, nothing asked.
          devices.put(m.pvName(), size);
          continue;
        }
        FilesystemGrower.Grown g = grower.grow(m);
        // A filesystem seen for the first time is said once: what the node component now watches.
        boolean seenBefore = grown.put(m.majorMinor(), g.device()) != null;
        devices.put(m.pvName(), g.device());
        if (g.grew() || sayAll || !seenBefore) {
          say.accept(said(g, pods.get(m.majorMinor())));
        }
        if (g.grew() || first) {
          toFinish.add(m.pvName());
        }
      } catch (HostException e) {
        say.accept(m.pvName() + ": " + e.getMessage());
        failed++;
      }
    }
    first = false;
    // Devices gone from this node: a new device of the same numbers is grown afresh.
    grown.keySet().retainAll(byDevice.keySet());
    return new Pass(notMounted, failed + finish(devices));
  }

  /**
   * Puts the mounts of PVs asked for ({@code only}, or all) that are Cinder's into {@code into},
   * one per device, counting each device's Pods; returns how many PVs could not be looked up.
   */
  private int select(
      List<KubeletMounts.Mount> mounts,
      List<String> only,
      Map<String, KubeletMounts.Mount> into,
      Map<String, Integer> pods,
      Set<Mounted> seen) {
    int unknown = 0;
    for (KubeletMounts.Mount m : mounts) {
      if (!only.isEmpty() && !only.contains(m.pvName())) {
        continue;
      }
      Mounted key = new Mounted(m.majorMinor(), m.pvName());
      boolean firstSight = seen.add(key);
      Boolean cinders = completion == null ? Boolean.TRUE : ours.get(key);
      if (cinders == null && firstSight) {
        cinders = lookUp(key, m);
        unknown += cinders == null ? 1 : 0;
      }
      if (Boolean.TRUE.equals(cinders)) {
        // One growth per device, however many Pods mount it.
        into.putIfAbsent(m.majorMinor(), m);
        pods.merge(m.majorMinor(), 1, Integer::sum);
      }
    }
    return unknown;
  }

  /** Whether the PV is a Cinder volume's, remembered; null (and said) when it cannot be asked. */
  private Boolean lookUp(Mounted key, KubeletMounts.Mount m) {
    boolean cinders;
    try {
      cinders = completion.isCinderVolume(m.pvName());
    } catch (KubernetesClientException e) {
      say.accept(m.pvName() + ": not looked up (tried again): " + e.getMessage());
      return null;
    }
    ours.put(key, cinders);
    if (!cinders) {
      say.accept(m.pvName() + " (" + m.device() + "): not a Cinder volume's PV; left alone");
    }
    return cinders;
  }

  /**
   * Rescans the raw block volumes, so that their Pods see a grown device's size (the provisioner
   * finishes their claims itself); returns how many could not be rescanned.
   */
  private int rescanRaw(Map<String, KubeletMounts.Mount> byRaw, Map<String, Integer> pods) {
    int failed = 0;
    for (KubeletMounts.Mount d : byRaw.values()) {
      try {
        long size = grower.rescan(d);
        Long before = raw.put(d.majorMinor(), size);
        if (before == null || before != size || sayAll) {
          int n = pods.get(d.majorMinor());
          say.accept(
              d.pvName()
                  + " ("
                  + d.device()
                  + ", raw block for "
                  + n
                  + (n == 1 ? " Pod" : " Pods")
                  + "): device "
                  + (before == null || before == size ? "" : gib(before) + " -> ")
                  + gib(size));
        }
      } catch (HostException e) {
        say.accept(d.pvName() + ": " + e.getMessage());
        failed++;
      }
    }
    raw.keySet().retainAll(byRaw.keySet());
    return failed;
  }

  /** Finishes the claims waiting for a device of this node; returns how many could not be asked. */
  private int finish(Map<String, Long> devices) {
    if (completion == null) {
      toFinish.clear();
      return 0;
    }
    int failed = 0;
    for (Iterator<String> it = toFinish.iterator(); it.hasNext(); ) {
      String pv = it.next();
      Long device = devices.get(pv);
      if (device == null) {
        // Not mounted here any more (or its growth failed: tried again with the next growth).
        it.remove();
        continue;
      }
      try {
        ClaimResizeCompletion.Result r = completion.complete(pv, device);
        if (r.outcome() != ClaimResizeCompletion.Outcome.NOT_YET) {
          it.remove();
        }
        if (r.outcome() == ClaimResizeCompletion.Outcome.COMPLETED || sayAll) {
          say.accept(r.said());
        }
      } catch (KubernetesClientException e) {
        say.accept(pv + ": its claim could not be finished (tried again): " + e.getMessage());
        failed++;
      }
    }
    return failed;
  }

  static String said(FilesystemGrower.Grown g, int pods) {
    KubeletMounts.Mount m = g.mount();
    String what =
        m.pvName()
            + " ("
            + m.device()
            + ", "
            + m.fsType()
            + ", mounted for "
            + pods
            + (pods == 1 ? " Pod" : " Pods")
            + "): ";
    String device =
        g.device() == g.deviceBefore()
            ? "device " + gib(g.device())
            : "device " + gib(g.deviceBefore()) + " -> " + gib(g.device());
    if (!g.grew()) {
      return what + "fills its device already (" + device + ", " + g.rescanned() + ")";
    }
    return what
        + "grown: "
        + device
        + " ("
        + g.rescanned()
        + "), filesystem "
        + gib(g.filesystemBefore())
        + " -> "
        + gib(g.filesystem());
  }

  private static String gib(long bytes) {
    return String.format(Locale.ROOT, "%.2f GiB", bytes / (double) (1L << 30));
  }
}
