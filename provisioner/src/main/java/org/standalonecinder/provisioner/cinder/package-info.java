/**
 * The one narrow interface to Cinder ({@code CinderClient}) and its own types: volumes, snapshots,
 * backups, attachments, pools, microversions, typed errors mapped once from HTTP, and the export of
 * a volume through the attachments API ({@code CinderExport}). Only {@code cinder.openstack} speaks
 * HTTP to it.
 */
package org.standalonecinder.provisioner.cinder;
