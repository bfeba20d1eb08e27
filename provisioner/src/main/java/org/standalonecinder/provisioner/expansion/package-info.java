/**
 * Growing a claim: the Cinder volume grown by the claim loop ({@code ClaimExpansion}, as
 * Kubernetes' external resizers do), and the vocabulary of a resize ({@code Resize}) that the claim
 * loop and the node component share.
 */
package org.standalonecinder.provisioner.expansion;
