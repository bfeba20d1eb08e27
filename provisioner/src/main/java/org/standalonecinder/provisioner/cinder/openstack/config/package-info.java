/**
 * Cloud configuration as cloud-provider-openstack reads it: the INI file ({@code [Global]}, {@code
 * [BlockStorage]}), the environment, typed settings with documented defaults, secrets masked when
 * printed.
 */
package org.standalonecinder.provisioner.cinder.openstack.config;
