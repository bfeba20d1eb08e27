package org.standalonecinder.provisioner.cinder;

/**
 * What the Cinder endpoint supports and what this client sends.
 *
 * @param min the oldest microversion the server accepts
 * @param max the newest microversion the server accepts
 * @param used the version sent on every call: the server's newest, capped at the newest this client
 *     knows
 */
public record ApiVersions(Microversion min, Microversion max, Microversion used) {}
