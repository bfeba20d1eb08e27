package org.standalonecinder.provisioner.cinder.openstack;

import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.raw;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.required;
import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.text;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.openstack4j.core.transport.HttpMethod;
import org.standalonecinder.provisioner.cinder.Capacity;
import org.standalonecinder.provisioner.cinder.Pool;

/** The scheduler's pools and their capacity. */
final class PoolCalls {

  private final CinderHttp http;

  PoolCalls(CinderHttp http) {
    this.http = http;
  }

  List<Pool> pools() {
    JsonNode res =
        http.call(
            "list pools",
            HttpMethod.GET,
            "/scheduler-stats/get_pools",
            null,
            Map.of("detail", "true"));
    List<Pool> out = new ArrayList<>();
    for (JsonNode p : required(res, "pools", "list pools")) {
      JsonNode c = p.path("capabilities");
      out.add(
          new Pool(
              p.path("name").asText(),
              text(c, "volume_backend_name"),
              text(c, "storage_protocol"),
              Capacity.parse(raw(c.get("total_capacity_gb"))),
              Capacity.parse(raw(c.get("free_capacity_gb"))),
              Capacity.parse(raw(c.get("allocated_capacity_gb"))),
              Capacity.parse(raw(c.get("provisioned_capacity_gb"))),
              ratio(raw(c.get("max_over_subscription_ratio")))));
    }
    return out;
  }

  /** Cinder sends the ratio as a number or a string ("20.0", or "auto" for thin drivers). */
  private static Double ratio(Object raw) {
    if (raw instanceof Number n) {
      return n.doubleValue();
    }
    try {
      return raw == null ? null : Double.valueOf(raw.toString().trim());
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
