package org.standalonecinder.provisioner.snapshot;

import java.util.Map;

/** Reading the loosely typed JSON of objects served by CRDs: a wrong shape reads as absent. */
final class Json {

  private Json() {}

  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Object o) {
    return o instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }

  static String string(Object o) {
    return o instanceof String s ? s : null;
  }
}
