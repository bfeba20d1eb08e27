package org.standalonecinder.provisioner.provision;

import java.util.Set;
import org.standalonecinder.provisioner.cinder.Backoff;
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

  /** What a volume may be in while it is extended and once it is done. */
  private static final Set<String> SETTLED = Set.of("available", "in-use");

  private final CinderClient cinder;
  private final Backoff backoff;

  public VolumeExpander(CinderClient cinder, Backoff backoff) {
    this.cinder = cinder;
    this.backoff = backoff;
  }

  /**
   * The volume's size before and after.
   *
   * @param fromGib the size Cinder had when asked
   * @param toGib the size it has now, at least what was asked for
   */
  public record Grown(int fromGib, int toGib) {
    /** Whether this call extended the volume (false when an earlier attempt already had). */
    public boolean extended() {
      return toGib > fromGib;
    }
  }

  /**
   * Extends the volume to {@code wantGib} unless it is that big already.
   *
   * @throws ProvisioningException final when Cinder cannot do it without a change by the admin
   *     (microversion, backend, a volume in {@code error_extending}); retryable otherwise
   */
  public Grown expand(String volumeId, int wantGib) {
    Volume v;
    try {
      v =
          cinder
              .getVolume(volumeId)
              .orElseThrow(
                  () ->
                      ProvisioningException.invalid(
                          "Cinder no longer knows volume " + volumeId + "; it cannot grow"));
      if (v.sizeGib() >= wantGib) {
        return new Grown(v.sizeGib(), v.sizeGib());
      }
      if (v.status().equals("error_extending")) {
        throw stuck(v);
      }
      if (!SETTLED.contains(v.status())) {
        // extending (an earlier attempt's), attaching, detaching, backing-up: wait for it
        v = cinder.awaitVolumeStatus(volumeId, SETTLED, backoff);
        if (v.sizeGib() >= wantGib) {
          return new Grown(v.sizeGib(), v.sizeGib());
        }
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
      Volume done = cinder.awaitVolumeStatus(volumeId, SETTLED, backoff);
      if (done.sizeGib() < wantGib) {
        throw new ProvisioningException(
            "Cinder reports volume "
                + volumeId
                + " at "
                + done.sizeGib()
                + " GiB after extending it to "
                + wantGib
                + " GiB",
            false,
            null);
      }
      return new Grown(from, done.sizeGib());
    } catch (CinderException.UnexpectedState e) {
      if ("error_extending".equals(e.status())) {
        throw stuck(cinder.getVolume(volumeId).orElseThrow(() -> e));
      }
      throw new ProvisioningException(e.getMessage(), false, e);
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
