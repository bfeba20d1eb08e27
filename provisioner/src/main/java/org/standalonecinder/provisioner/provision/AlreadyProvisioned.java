package org.standalonecinder.provisioner.provision;

/** The claim's PV exists already: its volume is the PV's, and nothing was done to it. */
public final class AlreadyProvisioned extends RuntimeException {
  public AlreadyProvisioned(String pvName) {
    super("PersistentVolume " + pvName + " exists already", null, false, false);
  }
}
