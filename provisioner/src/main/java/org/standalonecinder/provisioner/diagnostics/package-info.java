/** Read-only probes an operator runs from {@code check}: what a node's iSCSI initiator sees. */
package org.standalonecinder.provisioner.diagnostics;
