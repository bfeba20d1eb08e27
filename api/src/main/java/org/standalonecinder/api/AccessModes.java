package org.standalonecinder.api;

import java.util.List;
import java.util.Optional;

/**
 * Which access modes a claim of ours may ask for, decided once for the webhook (at admission) and
 * the provisioner (which holds the line when the webhook is absent or in audit mode).
 */
public final class AccessModes {

  /** Why ReadWriteMany needs volumeMode Block. */
  public static final String SHARED_FILESYSTEM =
      "ReadWriteMany needs volumeMode Block: a Filesystem volume (ext4, xfs) mounted read-write on"
          + " several nodes at once is corrupted, since neither filesystem is cluster-aware; use"
          + " volumeMode Block for software that coordinates its own writes, or ReadOnlyMany to"
          + " share a filesystem read-only";

  private AccessModes() {}

  /**
   * Why a claim with these access modes and this volume mode cannot have a volume of ours, or empty
   * when it can. ReadWriteMany is safe on raw blocks only; ReadOnlyMany is safe either way.
   *
   * @param volumeMode {@code Block}, {@code Filesystem}, or null (the API server's default is
   *     Filesystem)
   */
  public static Optional<String> refusal(List<String> modes, String volumeMode) {
    if (modes != null && modes.contains("ReadWriteMany") && !"Block".equals(volumeMode)) {
      return Optional.of(SHARED_FILESYSTEM);
    }
    return Optional.empty();
  }
}
