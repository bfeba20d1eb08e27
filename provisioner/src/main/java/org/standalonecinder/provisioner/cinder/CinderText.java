package org.standalonecinder.provisioner.cinder;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Cinder's bound on the text it keeps: a description and each metadata value hold 255 characters,
 * and a longer one gets the whole request refused (400). A Kubernetes name alone may be 253
 * characters, so what is made of names (a claim's namespace and name, a VolumeSnapshot's) is cut
 * here, where every spec is made, rather than failing the claim.
 */
public final class CinderText {

  /** The most characters Cinder keeps of a description or a metadata value. */
  public static final int MAX = 255;

  private static final String CUT = "...";

  private CinderText() {}

  /** {@code text} whole when it fits, else its start and a mark that it was cut; null stays. */
  public static String bounded(String text) {
    if (text == null || text.length() <= MAX) {
      return text;
    }
    int end = MAX - CUT.length();
    if (Character.isHighSurrogate(text.charAt(end - 1))) {
      end--; // never half a character
    }
    return text.substring(0, end) + CUT;
  }

  /** Every value {@link #bounded}; keys are the project's own and short. */
  public static Map<String, String> bounded(Map<String, String> metadata) {
    if (metadata == null) {
      return Map.of();
    }
    Map<String, String> out = new LinkedHashMap<>();
    metadata.forEach((k, v) -> out.put(k, bounded(v)));
    return Map.copyOf(out);
  }
}
