/**
 * What the provisioner and the webhook agree on: StorageClass parameters and annotation names. No
 * dependencies, so both deployables can use it.
 */
package org.standalonecinder.api;
