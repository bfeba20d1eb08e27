package org.standalonecinder.e2e.standin;

import java.util.Map;

/** Reading the untyped maps of a {@code GenericKubernetesResource}. */
final class Maps {

  private Maps() {}

  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Object o) {
    return o instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }

  static String string(Object o) {
    return o == null ? null : o.toString();
  }

  /** A JSON number as a long, or null. */
  static Long number(Object o) {
    return o instanceof Number n ? Long.valueOf(n.longValue()) : null;
  }
}
