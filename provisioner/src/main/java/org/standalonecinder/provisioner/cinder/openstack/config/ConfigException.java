package org.standalonecinder.provisioner.cinder.openstack.config;

/** The configuration is wrong; the message names the key and its source and says what to change. */
public class ConfigException extends RuntimeException {
  public ConfigException(String message) {
    super(message);
  }

  public ConfigException(String message, Throwable cause) {
    super(message, cause);
  }
}
