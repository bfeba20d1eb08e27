/**
 * A claim's Cinder volume made, exported, handed to its PV, released and cleaned up: looked up by
 * the claim's identity before anything is made (names from the claim's UID), carried in the
 * background while Cinder makes, deletes or grows it ({@code BeingMade}), bounded copies in flight
 * ({@code controller.InFlight}), every undo step safe to repeat. Also who this provisioner is
 * ({@code ProvisionerSettings}) and its object names ({@code Names}).
 */
package org.standalonecinder.provisioner.provision;
