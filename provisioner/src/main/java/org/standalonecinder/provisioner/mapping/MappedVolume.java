package org.standalonecinder.provisioner.mapping;

import io.fabric8.kubernetes.api.model.PersistentVolumeSpec;
import io.fabric8.kubernetes.api.model.Secret;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A Cinder export as Kubernetes sees it: the native volume source to put into the PV, and the
 * Secret it refers to, if any.
 *
 * @param source sets the protocol's field of a PV spec ({@code iscsi}, {@code fc}, {@code rbd},
 *     {@code csi})
 * @param secret the auth Secret to create (or refresh) before the PV, or empty
 * @param sharedSecret whether other PVs may use the same Secret (cephx credentials are the same for
 *     every image; CHAP credentials are the volume's own): a shared Secret is removed only when no
 *     PV refers to it any more
 */
public record MappedVolume(
    Consumer<PersistentVolumeSpec> source, Optional<Secret> secret, boolean sharedSecret) {

  /** With a Secret of this PV's own, or none. */
  public MappedVolume(Consumer<PersistentVolumeSpec> source, Optional<Secret> secret) {
    this(source, secret, false);
  }
}
