package org.standalonecinder.provisioner.cinder.openstack;

/** Obtains a fresh token; each call goes to Keystone (or, for noauth, nowhere). */
interface Authenticator {
  AuthToken authenticate();
}
