package org.standalonecinder.provisioner.cinder.openstack;

import java.net.URI;
import java.time.Instant;
import org.standalonecinder.provisioner.cinder.openstack.config.Secret;

/**
 * A token and the Cinder endpoint found for it.
 *
 * @param id the token sent as {@code X-Auth-Token}
 * @param cinderEndpoint the block-storage v3 endpoint, including the project id if the catalog has
 *     it
 * @param expiresAt when Keystone stops accepting it, or null for never (noauth)
 */
record AuthToken(Secret id, URI cinderEndpoint, Instant expiresAt) {}
