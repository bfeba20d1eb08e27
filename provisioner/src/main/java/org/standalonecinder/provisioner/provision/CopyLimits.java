package org.standalonecinder.provisioner.provision;

/**
 * How many copies (clones and restores) Cinder may be making for claims at once. No worker waits
 * for a copy, so the workers no longer bound them; these do, so that one namespace's burst of
 * clones takes neither Cinder's whole capacity nor starts hundreds of copies on one backend.
 *
 * @param total overall
 * @param perNamespace in one namespace
 */
public record CopyLimits(int total, int perNamespace) {

  /** The defaults: 16 at once, a namespace at most half of them. */
  public static final CopyLimits DEFAULT = new CopyLimits(16, 8);

  /** The same bounds for {@link org.standalonecinder.provisioner.controller.InFlight}. */
  public org.standalonecinder.provisioner.controller.InFlight.Limits inFlight() {
    return new org.standalonecinder.provisioner.controller.InFlight.Limits(
        "copies", total, perNamespace, "--max-copies", "--max-copies-per-namespace");
  }

  public CopyLimits {
    if (total < 1 || perNamespace < 1) {
      throw new IllegalArgumentException("copy limits must be at least 1");
    }
  }
}
