/**
 * From Cinder's {@code connection_info} to a PV source: one {@code VolumeMapper} per {@code
 * driver_volume_type} (iSCSI with CHAP, FC, RBD as in-tree or ceph-csi), with the auth Secrets each
 * needs. Reads top to bottom: knows no provisioning and no controller.
 */
package org.standalonecinder.provisioner.mapping;
