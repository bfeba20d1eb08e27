/**
 * The command line of the one jar: {@code run} (the provisioner), {@code resolver}, {@code check},
 * {@code pools}, {@code attach}, {@code detach}, {@code grow-filesystems} and their settings, read
 * once from flags, the environment and files, typed, and failing at start when wrong.
 */
package org.standalonecinder.provisioner.cli;
