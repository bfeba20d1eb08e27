/**
 * The engine every loop of the provisioner runs on and the claim loop itself. {@code Loop}: keys
 * from informers into a queue with a line per namespace, workers that are replaced when they die,
 * retries with backoff, one pending look per key; {@code Engine}: start, stop and leadership for
 * all loops. No step waits for the storage: work returns when to look again ({@code Pace}), and
 * slow operations in flight are bounded overall and per namespace ({@code InFlight}). The claim
 * loop ({@code ClaimController}, {@code ClaimSync}) decides which claims and PVs are this
 * provisioner's and when; what the storage does is behind {@code Provisioner}. This package knows
 * no Cinder.
 */
package org.standalonecinder.provisioner.controller;
