package org.standalonecinder.api;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** Fingerprints that a tenant cannot make collide: what names and caches key on. */
public final class Digests {

  private Digests() {}

  /** The SHA-256 of {@code s} (UTF-8), in lower-case hex: 64 characters. */
  public static String sha256Hex(String s) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }
}
