package org.standalonecinder.provisioner.cinder;

/**
 * How a volume is exported to a host, by the microversion in use: the one rule the provisioner, the
 * attach CLI and {@code cinder check} share, so that what the check reports is what provisioning
 * does.
 */
public enum ExportPath {
  /**
   * Attachment create with the connector, then complete ({@code os-complete}, 3.44): the connection
   * info comes with the attachment and Cinder tracks the host.
   */
  ATTACHMENTS("the attachments API (create + complete)"),
  /**
   * {@code os-reserve} then {@code os-initialize_connection}: every Cinder has them. Below 3.44 the
   * attachments API (3.27) can create an attachment but not complete it.
   */
  RESERVE("reserve + initialize_connection");

  private final String describe;

  ExportPath(String describe) {
    this.describe = describe;
  }

  /**
   * The path for this microversion.
   *
   * @param readOnly an attachment in mode {@code ro}, which the attachments API takes only from
   *     3.54 on
   */
  public static ExportPath of(Microversion used, boolean readOnly) {
    boolean attachments =
        used.atLeast(Microversion.ATTACHMENT_COMPLETE)
            && (!readOnly || used.atLeast(Microversion.ATTACH_MODE));
    return attachments ? ATTACHMENTS : RESERVE;
  }

  /** Words for a report, e.g. {@code reserve + initialize_connection}. */
  public String describe() {
    return describe;
  }
}
