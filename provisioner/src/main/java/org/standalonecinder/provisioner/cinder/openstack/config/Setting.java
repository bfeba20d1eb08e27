package org.standalonecinder.provisioner.cinder.openstack.config;

/**
 * One configured value and where it came from, e.g. {@code env OS_PROJECT_ID} or {@code
 * /etc/cloud.conf [Global] tenant-id}.
 *
 * @param value the raw text
 * @param source where it was read, for error messages and the start-up log
 */
public record Setting(String value, String source) {

  @Override
  public String toString() {
    return "Setting[source=" + source + "]";
  }
}
