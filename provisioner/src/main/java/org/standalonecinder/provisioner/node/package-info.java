/**
 * The optional node component ({@code grow-filesystems}): finds the kubelet's mounts of this
 * provisioner's PVs whose volume grew, rescans and grows the filesystem, and finishes the claim's
 * resize in its status.
 */
package org.standalonecinder.provisioner.node;
