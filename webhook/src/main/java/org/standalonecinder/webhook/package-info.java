/**
 * The admission webhook: validates and defaults clone annotations and smartclone StorageClasses.
 * Filled in by the webhook issue.
 */
package org.standalonecinder.webhook;
