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

  /**
   * What a volume passes through that an extend waits for: its own extend, or another operation
   * that ends by itself. Any other status (an {@code error}, {@code maintenance}) is a failure.
   */
  private static final Set<String> PASSING =
      Set.of("extending", "attaching", "detaching", "backing-up", "reserved", "uploading");

  private final CinderClient cinder;

  /**
   * The volumes this process asked Cinder to extend, and to what size, until a look finds them
   * grown: a look that finds one settled and still smaller was dropped by Cinder (no backend had
   * room, told only in Cinder's user messages), which is a failure, not a reason to ask again at
   * once. An entry goes with its answer, so the map is as large as the extends in flight.
   */
  private final java.util.Map<String, Integer> asked =
      new java.util.concurrent.ConcurrentHashMap<>();

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
        asked.remove(volumeId);
        return new Grown(v.sizeGib(), v.sizeGib());
      }
      if (PASSING.contains(v.status())) {
        // its extend (an earlier look's), or an operation that ends by itself: looked at again
        return new Growing(volumeId, v.status());
      }
      Integer before = asked.remove(volumeId);
      if (!SETTLED.contains(v.status())) {
        throw v.status().equals("error_extending") ? stuck(v) : unsettled(v);
      }
      if (before != null) {
        throw dropped(v, before);
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
      asked.put(volumeId, wantGib);
      // One look at once: a backend that grows a volume in a moment costs no second look.
      Volume now = volume(volumeId);
      if (now.status().equals("error_extending")) {
        asked.remove(volumeId);
        throw stuck(now);
      }
      if (SETTLED.contains(now.status()) && now.sizeGib() >= wantGib) {
        asked.remove(volumeId);
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

  /** A volume in a status no extend comes out of by itself. */
  private static ProvisioningException unsettled(Volume v) {
    return new ProvisioningException(
        "Cinder's volume "
            + v.id()
            + " is "
            + v.status()
            + ", where it cannot grow (still "
            + v.sizeGib()
            + " GiB); see cinder-volume's log",
        false,
        null);
  }

  /**
   * An extend Cinder accepted and then did not do: the volume is back to what it was, at its old
   * size (a scheduler that found no backend with room says so only in Cinder's user messages).
   */
  private static ProvisioningException dropped(Volume v, int askedGib) {
    return new ProvisioningException(
        "Cinder did not grow volume "
            + v.id()
            + " to "
            + askedGib
            + " GiB: it is "
            + v.status()
            + " at "
            + v.sizeGib()
            + " GiB again (a backend without room, most often; Cinder says why in: cinder"
            + " message-list --resource_uuid "
            + v.id()
            + "); asked again later",
        false,
        null);
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
