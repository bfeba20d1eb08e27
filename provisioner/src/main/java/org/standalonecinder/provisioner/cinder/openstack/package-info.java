/**
 * The one real adapter behind {@code CinderClient}: Cinder's v3 API over HTTP (keystone or noauth),
 * calls grouped by resource, JSON read into the interface's types, errors mapped to {@code
 * CinderException}s, idempotent calls retried, tokens cached and renewed.
 */
package org.standalonecinder.provisioner.cinder.openstack;
