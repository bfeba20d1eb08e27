package org.standalonecinder.provisioner.mapping;

import io.fabric8.kubernetes.api.model.PersistentVolumeSpec;
import io.fabric8.kubernetes.api.model.Secret;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A Cinder export as Kubernetes sees it: the native volume source to put into the PV, and the
 * Secret it refers to (CHAP credentials), if any.
 *
 * @param source sets the protocol's field of a PV spec ({@code iscsi}, {@code fc}, {@code rbd})
 * @param secret the auth Secret to create before the PV, or empty
 */
public record MappedVolume(Consumer<PersistentVolumeSpec> source, Optional<Secret> secret) {}
