/**
 * What Cinder plugs into the claim loop: {@code CinderProvisioner} implements the loop's {@code
 * Provisioner} with volume provisioning, clones, restores, leftovers and expansion (from {@code
 * provision}, {@code clone}, {@code snapshot} and {@code expansion}); it decides nothing of its own
 * beyond which of them a claim needs.
 */
package org.standalonecinder.provisioner.plugin;
