/**
 * A node's side of an export, for the attach CLI: iSCSI logins (with CHAP), RBD maps and FC rescans
 * through the host's own tools, and finding the device that appears. Talks to no API server.
 */
package org.standalonecinder.provisioner.host;
