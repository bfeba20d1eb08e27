package org.standalonecinder.provisioner.cinder.openstack;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.openstack4j.api.exceptions.AuthenticationException;
import org.openstack4j.api.exceptions.ConnectionException;
import org.openstack4j.api.exceptions.ResponseException;
import org.openstack4j.api.types.Facing;
import org.openstack4j.core.transport.Config;
import org.openstack4j.core.transport.HttpMethod;
import org.openstack4j.core.transport.HttpRequest;
import org.openstack4j.model.identity.v2.Access;
import org.openstack4j.model.identity.v2.Endpoint;
import org.openstack4j.openstack.OSFactory;
import org.standalonecinder.provisioner.cinder.CinderException;
import org.standalonecinder.provisioner.config.CloudConfig;
import org.standalonecinder.provisioner.config.Secret;

/**
 * Keystone authentication: v3 password, application credential and trust, and v2.0 password.
 *
 * <p>v3 requests are built here because openstack4j's builder knows neither application credentials
 * nor trust scopes; they still travel through openstack4j's transport. v2.0 uses openstack4j's
 * builder as it is. Either way the block-storage endpoint is looked up in the catalog here, by type
 * ({@code volumev3}, then {@code block-storage}), interface and region: openstack4j's lookup takes
 * the first of volume/volumev2/volumev3 and caches it process-wide.
 */
final class KeystoneAuthenticator implements Authenticator {

  static final List<String> CATALOG_TYPES = List.of("volumev3", "block-storage");

  private static final ObjectMapper JSON = new ObjectMapper();

  private final CloudConfig cfg;
  private final Config transport;

  KeystoneAuthenticator(CloudConfig cfg, Config transport) {
    this.cfg = cfg;
    this.transport = transport;
  }

  @Override
  public AuthToken authenticate() {
    return cfg.auth() == CloudConfig.AuthMethod.V2_PASSWORD ? v2() : v3();
  }

  /** The Keystone v3 base URL: the configured one, with {@code /v3} added when it has none. */
  static String v3Base(URI authUrl) {
    String u = authUrl.toString().replaceAll("/+$", "");
    return u.matches(".*/v3(\\.\\d+)?$") ? u : u + "/v3";
  }

  private AuthToken v3() {
    String url = v3Base(cfg.authUrl());
    HttpRequest<Void> req =
        HttpRequest.builder(Void.class)
            .endpoint(url)
            .path("/auth/tokens")
            .method(HttpMethod.POST)
            .header("Accept", "application/json")
            .json(v3Body(cfg).toString())
            .config(transport)
            .build();
    OkHttpTransport.BufferedResponse res = OkHttpTransport.execute(req, "Keystone " + url);
    String body = res.bodyText();
    int status = res.getStatus();
    if (status == 404) {
      throw new CinderException.Misconfigured(
          "Keystone "
              + url
              + "/auth/tokens answered 404: is [Global] auth-url the Keystone v3 URL?",
          null);
    }
    if (status == 401) {
      // Keystone says no more than "requires authentication" for every cause: list them.
      throw new CinderException.Unauthorized(
          "Keystone authentication as "
              + who()
              + ": "
              + Errors.message(status, body)
              + " Check "
              + causes(),
          Errors.requestId(res));
    }
    if (status / 100 != 2) {
      throw Errors.fromStatus(
          "Keystone authentication as " + who(), status, body, Errors.requestId(res));
    }
    String tokenId = res.header("X-Subject-Token");
    if (tokenId == null) {
      throw new CinderException.Unavailable(
          "Keystone answered " + status + " without an X-Subject-Token header", status, null, null);
    }
    JsonNode token;
    try {
      token = JSON.readTree(body).path("token");
    } catch (IOException e) {
      throw new CinderException.Unavailable(
          "Keystone's token response is not JSON", status, null, e);
    }
    Instant expires = parseInstant(token.path("expires_at").asText(null));
    List<String> seen = new ArrayList<>();
    for (String type : CATALOG_TYPES) {
      for (JsonNode svc : token.path("catalog")) {
        String t = svc.path("type").asText();
        if (!seen.contains(t)) {
          seen.add(t);
        }
        if (!type.equals(t)) {
          continue;
        }
        for (JsonNode ep : svc.path("endpoints")) {
          String region = ep.hasNonNull("region_id") ? ep.get("region_id").asText() : null;
          String regionName = ep.hasNonNull("region") ? ep.get("region").asText() : region;
          if (cfg.endpointInterface().equals(ep.path("interface").asText())
              && (cfg.region() == null
                  || cfg.region().equals(region)
                  || cfg.region().equals(regionName))) {
            return new AuthToken(Secret.of(tokenId), URI.create(ep.path("url").asText()), expires);
          }
        }
      }
    }
    throw noEndpoint(seen);
  }

  private CinderException noEndpoint(List<String> seen) {
    return new CinderException.Misconfigured(
        "the Keystone catalog has no "
            + String.join(" or ", CATALOG_TYPES)
            + " endpoint with interface "
            + cfg.endpointInterface()
            + (cfg.region() == null ? "" : " in region " + cfg.region())
            + "; service types in the catalog: "
            + seen,
        null);
  }

  private String who() {
    return cfg.username() != null
        ? "user '" + cfg.username() + "'"
        : cfg.userId() != null
            ? "user id " + cfg.userId()
            : "application credential " + cfg.applicationCredentialId();
  }

  private String causes() {
    return switch (cfg.auth()) {
      case V3_APPLICATION_CREDENTIAL ->
          "the application credential's id (or name and user) and secret, and that it has not"
              + " expired.";
      case V3_TRUST ->
          "the trustee's name, domain and password, and that trust "
              + cfg.trustId()
              + " exists, names this user as trustee and has not expired.";
      default ->
          "the user name, its domain and password, and that the user has a role on project "
              + (cfg.projectId() != null ? cfg.projectId() : "'" + cfg.projectName() + "'")
              + (cfg.projectId() != null
                  ? ""
                  : " in domain "
                      + (cfg.projectDomainId() != null
                          ? cfg.projectDomainId()
                          : cfg.projectDomainName()))
              + ".";
    };
  }

  /** The v3 {@code auth} request body for the configured method. */
  static ObjectNode v3Body(CloudConfig cfg) {
    ObjectNode root = JSON.createObjectNode();
    ObjectNode auth = root.putObject("auth");
    ObjectNode identity = auth.putObject("identity");
    switch (cfg.auth()) {
      case V3_APPLICATION_CREDENTIAL -> {
        identity.putArray("methods").add("application_credential");
        ObjectNode ac = identity.putObject("application_credential");
        if (cfg.applicationCredentialId() != null) {
          ac.put("id", cfg.applicationCredentialId());
        } else {
          ac.put("name", cfg.applicationCredentialName());
          ac.set("user", user(cfg));
        }
        ac.put("secret", cfg.applicationCredentialSecret().reveal());
      }
      case V3_PASSWORD, V3_TRUST -> {
        identity.putArray("methods").add("password");
        ObjectNode user = user(cfg);
        user.put("password", cfg.password().reveal());
        identity.putObject("password").set("user", user);
        ObjectNode scope = auth.putObject("scope");
        if (cfg.auth() == CloudConfig.AuthMethod.V3_TRUST) {
          scope.putObject("OS-TRUST:trust").put("id", cfg.trustId());
        } else {
          ObjectNode project = scope.putObject("project");
          if (cfg.projectId() != null) {
            project.put("id", cfg.projectId());
          } else {
            project.put("name", cfg.projectName());
            project.set("domain", domain(cfg.projectDomainId(), cfg.projectDomainName()));
          }
        }
      }
      default -> throw new IllegalArgumentException("not a Keystone v3 method: " + cfg.auth());
    }
    return root;
  }

  private static ObjectNode user(CloudConfig cfg) {
    ObjectNode user = JSON.createObjectNode();
    if (cfg.userId() != null) {
      user.put("id", cfg.userId());
    } else {
      user.put("name", cfg.username());
      user.set("domain", domain(cfg.userDomainId(), cfg.userDomainName()));
    }
    return user;
  }

  private static ObjectNode domain(String id, String name) {
    ObjectNode d = JSON.createObjectNode();
    if (id != null) {
      d.put("id", id);
    } else {
      d.put("name", name);
    }
    return d;
  }

  private AuthToken v2() {
    String what = "Keystone v2.0 authentication as " + who();
    Access access;
    try {
      var b =
          OSFactory.builderV2()
              .endpoint(cfg.authUrl().toString())
              .credentials(cfg.username(), cfg.password().reveal())
              .perspective(facing())
              .withConfig(transport);
      if (cfg.projectId() != null) {
        b.tenantId(cfg.projectId());
      } else {
        b.tenantName(cfg.projectName());
      }
      access = b.authenticate().getAccess();
    } catch (AuthenticationException e) {
      throw new CinderException.Unauthorized(what + ": " + e.getMessage(), null);
    } catch (ConnectionException e) {
      throw Errors.fromTransport(what, e.getCause() == null ? e : e.getCause());
    } catch (ResponseException e) {
      throw Errors.fromStatus(what, e.getStatus(), "", null);
    }
    List<String> seen = new ArrayList<>();
    for (String type : CATALOG_TYPES) {
      for (Access.Service svc : access.getServiceCatalog()) {
        seen.add(svc.getType());
        if (!type.equals(svc.getType())) {
          continue;
        }
        for (Endpoint ep : svc.getEndpoints()) {
          if (cfg.region() != null && !cfg.region().equals(ep.getRegion())) {
            continue;
          }
          URI url =
              switch (cfg.endpointInterface()) {
                case "internal" -> ep.getInternalURL();
                case "admin" -> ep.getAdminURL();
                default -> ep.getPublicURL();
              };
          if (url != null) {
            Instant expires =
                access.getToken().getExpires() == null
                    ? null
                    : access.getToken().getExpires().toInstant();
            return new AuthToken(Secret.of(access.getToken().getId()), url, expires);
          }
        }
      }
    }
    throw noEndpoint(seen.stream().distinct().toList());
  }

  private Facing facing() {
    return Facing.value(cfg.endpointInterface().toUpperCase(Locale.ROOT));
  }

  private static Instant parseInstant(String s) {
    if (s == null) {
      return null;
    }
    try {
      return Instant.parse(s);
    } catch (RuntimeException e) {
      return null;
    }
  }
}
