/**
 * The webhook's CA and serving certificates: generation, renewal, rotation and caBundle injection.
 * This is the only module that imports Bouncy Castle. Filled in by the webhook issue.
 */
package org.standalonecinder.certs;
