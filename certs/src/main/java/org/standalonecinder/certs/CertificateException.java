package org.standalonecinder.certs;

/** A certificate could not be made, read or used; the message says which and why. */
public class CertificateException extends RuntimeException {
  public CertificateException(String message, Throwable cause) {
    super(message, cause);
  }
}
