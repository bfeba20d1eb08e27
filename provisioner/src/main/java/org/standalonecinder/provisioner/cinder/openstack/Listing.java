package org.standalonecinder.provisioner.cinder.openstack;

import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.JSON;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.required;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.openstack4j.core.transport.HttpMethod;

/**
 * Cinder's filtered, paged lists ({@code /volumes/detail}, {@code /snapshots/detail}): by name and
 * metadata, at most {@code osapi_max_limit} (1000) a page, the next page linked.
 */
final class Listing {

  /** A bound on pages: a server that links forever cannot hang us. */
  private static final int MAX_PAGES = 1000;

  private Listing() {}

  /**
   * Everything {@code path} lists under {@code key} whose name is {@code name} (when not null) and
   * whose metadata holds every entry of {@code metadata}.
   */
  static <T> List<T> all(
      CinderHttp http,
      String path,
      String key,
      String name,
      Map<String, String> metadata,
      Function<JsonNode, T> read,
      Function<T, String> id) {
    Map<String, Object> q = new LinkedHashMap<>();
    if (name != null) {
      q.put("name", name);
    }
    if (metadata != null && !metadata.isEmpty()) {
      try {
        q.put("metadata", JSON.writeValueAsString(metadata));
      } catch (IOException e) {
        throw new IllegalArgumentException(e);
      }
    }
    List<T> out = new ArrayList<>();
    for (int page = 1; ; page++) {
      JsonNode res = http.call("list " + key, HttpMethod.GET, path, null, q);
      JsonNode items = required(res, key, "list " + key);
      for (JsonNode item : items) {
        out.add(read.apply(item));
      }
      boolean more = false;
      for (JsonNode link : res.path(key + "_links")) {
        more |= "next".equals(link.path("rel").asText());
      }
      if (!more || items.isEmpty() || page >= MAX_PAGES) {
        return out;
      }
      q.put("marker", id.apply(out.get(out.size() - 1)));
    }
  }
}
