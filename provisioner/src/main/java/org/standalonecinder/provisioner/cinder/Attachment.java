package org.standalonecinder.provisioner.cinder;

/**
 * An attachment made through Cinder's attachments API (microversion 3.27 and later).
 *
 * @param id the attachment's UUID
 * @param volumeId the attached volume
 * @param status Cinder's attachment status ({@code reserved}, {@code attaching}, {@code attached})
 * @param connectionInfo the export, present once a connector was given
 * @param mode {@code rw} or {@code ro} as Cinder recorded it, or null where its answer has none
 */
public record Attachment(
    String id, String volumeId, String status, ConnectionInfo connectionInfo, String mode) {}
