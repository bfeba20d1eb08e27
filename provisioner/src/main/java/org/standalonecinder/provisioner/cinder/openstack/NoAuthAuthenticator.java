package org.standalonecinder.provisioner.cinder.openstack;

import java.net.URI;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig;
import org.standalonecinder.provisioner.cinder.openstack.config.Credentials;
import org.standalonecinder.provisioner.cinder.openstack.config.Secret;

/**
 * Cinder's noauth middleware: the token is {@code user:project}, the project goes into the URL.
 *
 * <p>The Go provisioner put the tenant <em>name</em> into the URL, which current Cinder answers
 * with 404; {@link CloudConfig} refuses anything but a hex project id at start-up.
 */
final class NoAuthAuthenticator implements Authenticator {

  private final AuthToken token;

  NoAuthAuthenticator(CloudConfig cfg) {
    String root = cfg.cinderEndpoint().toString().replaceAll("/+$", "");
    Credentials.NoAuth noauth = (Credentials.NoAuth) cfg.credentials();
    String project = noauth.projectId();
    String endpoint = root.endsWith("/" + project) ? root : root + "/" + project;
    this.token =
        new AuthToken(Secret.of(noauth.user() + ":" + project), URI.create(endpoint), null);
  }

  @Override
  public AuthToken authenticate() {
    return token;
  }
}
