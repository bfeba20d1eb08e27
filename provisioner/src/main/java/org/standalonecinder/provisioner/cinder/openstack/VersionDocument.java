package org.standalonecinder.provisioner.cinder.openstack;

import static org.standalonecinder.provisioner.cinder.openstack.CinderJson.JSON;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import org.openstack4j.core.transport.Config;
import org.openstack4j.core.transport.HttpMethod;
import org.openstack4j.core.transport.HttpRequest;
import org.standalonecinder.provisioner.cinder.ApiVersions;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.cinder.Microversion;

/** Cinder's version document: which v3 microversions the server has, and which one we use. */
final class VersionDocument {

  private VersionDocument() {}

  /**
   * Reads the version document at the root of {@code endpoint}: the v3 API's range, and the
   * microversion to use, the server's newest but at most {@code maxMicroversion}.
   */
  static ApiVersions read(String endpoint, Config transport, Microversion maxMicroversion) {
    String root = apiRoot(endpoint);
    HttpRequest<Void> req =
        HttpRequest.builder(Void.class)
            .endpoint(root)
            .path("/")
            .method(HttpMethod.GET)
            .header("Accept", "application/json")
            .config(transport)
            .build();
    OkHttpTransport.BufferedResponse res = OkHttpTransport.execute(req, "GET " + root);
    String text = res.bodyText();
    // The version document answers 300 Multiple Choices.
    if (res.getStatus() != 300 && res.getStatus() / 100 != 2) {
      throw Errors.fromStatus("GET " + root, res.getStatus(), text, Errors.requestId(res));
    }
    try {
      for (JsonNode ver : JSON.readTree(text).path("versions")) {
        if (ver.path("id").asText().startsWith("v3")) {
          Microversion min = Microversion.parse(ver.path("min_version").asText("3.0"));
          Microversion max = Microversion.parse(ver.path("version").asText("3.0"));
          Microversion used = max.compareTo(maxMicroversion) > 0 ? maxMicroversion : max;
          return new ApiVersions(min, max, used);
        }
      }
    } catch (IOException | IllegalArgumentException e) {
      throw new CinderException.Unavailable(
          "GET " + root + ": unreadable version document", res.getStatus(), null, e);
    }
    throw new CinderException.Unsupported(
        "GET " + root + " lists no v3 API: this Cinder is too old (v3 exists since Mitaka)",
        res.getStatus(),
        Errors.requestId(res));
  }

  /** {@code http://h:8776/v3/abc} becomes {@code http://h:8776}; a path prefix is kept. */
  static String apiRoot(String endpoint) {
    int i = endpoint.indexOf("/v3");
    String root = i < 0 ? endpoint : endpoint.substring(0, i);
    return root.replaceAll("/+$", "");
  }
}
