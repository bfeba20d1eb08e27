package org.standalonecinder.provisioner.provision;

import java.util.Set;
import org.standalonecinder.provisioner.cinder.CinderClient;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.Microversion;
import org.standalonecinder.provisioner.cinder.Volume;
import org.standalonecinder.provisioner.controller.ProvisioningException;

/**
 * Grows a claim's Cinder volume to the size its claim asks for: the Cinder half of an expansion,
 * safe to repeat at any point (a volume already as big as asked is not extended again).
 *
 * <p>The provisioner's volumes stay attached to the cluster for their whole life, so an extend is
 * almost always of an {@code in-use} volume: that needs microversion 3.42 and a backend that can
 * grow an exported volume (Cinder answers 400 otherwise, and the claim is told).
 */
public final class VolumeExpander {

  /** What a volume may be in before it is extended and once it is done. */
  private static final Set<String> SETTLED = Set.of("available", "in-use");

  private final CinderClient cinder;

  public VolumeExpander(CinderClient cinder) {
    this.cinder = cinder;
  }

  /** What one look at an expansion found: {@link Grown}, or {@link Growing} still. */
  public sealed interface Outcome permits Grown, Growing {}

  /**
   * The volume is as big as asked.
   *
   * @param fromGib the size Cinder had when asked
   * @param toGib the size it has now, at least what was asked for
   */
  public record Grown(int fromGib, int toGib) implements Outcome {
    /** Whether this look extended the volume (false when an earlier one already had). */
    public boolean extended() {
      return toGib > fromGib;
    }
  }

  /**
   * Cinder is at it (or at something else the extend waits for): look again.
   *
   * @param volumeId the volume
   * @param status its status now, e.g. {@code extending}
   */
  public record Growing(String volumeId, String status) implements Outcome {}

  /**
   * One look at the volume's growth to {@code wantGib}: asks Cinder to extend it unless it is that
   * big already or Cinder is busy with it. No worker waits for Cinder: the caller looks again while
   * the answer is {@link Growing}.
   *
   * @throws ProvisioningException final when Cinder cannot do it without a change by the admin
   *     (microversion, backend, a volume in {@code error_extending}); retryable otherwise
   */
  public Outcome expand(String volumeId, int wantGib) {
    try {
      Volume v = volume(volumeId);
      if (v.sizeGib() >= wantGib) {
        return new Grown(v.sizeGib(), v.sizeGib());
      }
      if (v.status().equals("error_extending")) {
        throw stuck(v);
      }
      if (!SETTLED.contains(v.status())) {
        // extending (an earlier look's), attaching, detaching, backing-up: looked at again
        return new Growing(volumeId, v.status());
      }
      Microversion used = cinder.apiVersions().used();
      if (v.status().equals("in-use") && !used.atLeast(Microversion.EXTEND_IN_USE)) {
        throw ProvisioningException.invalid(
            "Cinder cannot grow volume "
                + volumeId
                + " while it is attached at microversion "
                + used
                + "; "
                + Microversion.EXTEND_IN_USE
                + " is needed (the server offers up to "
                + cinder.apiVersions().max()
                + ", the provisioner's max-microversion may be lower)");
      }
      int from = v.sizeGib();
      cinder.extendVolume(volumeId, wantGib);
      // One look at once: a backend that grows a volume in a moment costs no second look.
      Volume now = volume(volumeId);
      if (now.status().equals("error_extending")) {
        throw stuck(now);
      }
      if (SETTLED.contains(now.status()) && now.sizeGib() >= wantGib) {
        return new Grown(from, now.sizeGib());
      }
      return new Growing(volumeId, now.status());
    } catch (CinderException.BadRequest e) {
      // a backend that cannot grow an exported volume, or a size over the type's limit
      throw new ProvisioningException(
          "Cinder refused to grow volume "
              + volumeId
              + " to "
              + wantGib
              + " GiB: "
              + e.getMessage(),
          true,
          e);
    } catch (CinderException e) {
      throw new ProvisioningException(e.getMessage(), !e.retryable(), e);
    }
  }

  private Volume volume(String volumeId) {
    return cinder
        .getVolume(volumeId)
        .orElseThrow(
            () ->
                ProvisioningException.invalid(
                    "Cinder no longer knows volume " + volumeId + "; it cannot grow"));
  }

  private static ProvisioningException stuck(Volume v) {
    return ProvisioningException.invalid(
        "Cinder's backend failed to grow volume "
            + v.id()
            + " (status error_extending, still "
            + v.sizeGib()
            + " GiB); see cinder-volume's log, then an admin resets it: cinder reset-state"
            + " --state in-use "
            + v.id());
  }
}
