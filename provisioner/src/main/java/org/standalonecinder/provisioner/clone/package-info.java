/**
 * Clones of claims: a clone request read and checked against the source's grant or the webhook's
 * token, the source's volume resolved ({@code CloneResolver}, also served to the webhook by {@code
 * ResolverServer}), the source protected by a finalizer while Cinder copies, and the clone marked
 * {@code k8s.io/CloneOf} once made.
 */
package org.standalonecinder.provisioner.clone;
