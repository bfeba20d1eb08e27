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
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig;
import org.standalonecinder.provisioner.cinder.openstack.config.Credentials;
import org.standalonecinder.provisioner.cinder.openstack.config.Secret;

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
    return cfg.credentials() instanceof Credentials.V2Password v2 ? v2(v2) : v3();
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
    return new AuthToken(Secret.of(tokenId), blockStorage(token), expires);
  }

  /** The block storage endpoint of the token's catalog for the configured interface and region. */
  private URI blockStorage(JsonNode token) {
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
            return URI.create(ep.path("url").asText());
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
    Credentials c = cfg.credentials();
    if (c instanceof Credentials.V2Password p) {
      return p.user().describe();
    }
    if (c instanceof Credentials.V3Password p) {
      return p.user().describe();
    }
    if (c instanceof Credentials.V3Trust t) {
      return t.user().describe();
    }
    if (c instanceof Credentials.V3ApplicationCredential ac) {
      return ac.id() != null
          ? "application credential " + ac.id()
          : "application credential '" + ac.name() + "' of " + ac.user().describe();
    }
    return String.valueOf(c.method());
  }

  private String causes() {
    Credentials c = cfg.credentials();
    if (c instanceof Credentials.V3ApplicationCredential) {
      return "the application credential's id (or name and user) and secret, and that it has not"
          + " expired.";
    }
    if (c instanceof Credentials.V3Trust t) {
      return "the trustee's name, domain and password, and that trust "
          + t.trustId()
          + " exists, names this user as trustee and has not expired.";
    }
    if (c instanceof Credentials.V3Password p) {
      return userOnProject(p.project());
    }
    if (c instanceof Credentials.V2Password p) {
      return userOnProject(p.project());
    }
    return "the configuration.";
  }

  private static String userOnProject(Credentials.Project project) {
    return "the user name, its domain and password, and that the user has a role on project "
        + project.describe()
        + ".";
  }

  /** The v3 {@code auth} request body for the configured method. */
  static ObjectNode v3Body(CloudConfig cfg) {
    ObjectNode root = JSON.createObjectNode();
    ObjectNode auth = root.putObject("auth");
    ObjectNode identity = auth.putObject("identity");
    Credentials c = cfg.credentials();
    if (c instanceof Credentials.V3ApplicationCredential app) {
      identity.putArray("methods").add("application_credential");
      ObjectNode ac = identity.putObject("application_credential");
      if (app.id() != null) {
        ac.put("id", app.id());
      } else {
        ac.put("name", app.name());
        ac.set("user", user(app.user()));
      }
      ac.put("secret", app.secret().reveal());
    } else if (c instanceof Credentials.V3Password p) {
      password(identity, p.user(), p.password());
      ObjectNode project = auth.putObject("scope").putObject("project");
      if (p.project().id() != null) {
        project.put("id", p.project().id());
      } else {
        project.put("name", p.project().name());
        project.set("domain", domain(p.project().domainId(), p.project().domainName()));
      }
    } else if (c instanceof Credentials.V3Trust t) {
      password(identity, t.user(), t.password());
      auth.putObject("scope").putObject("OS-TRUST:trust").put("id", t.trustId());
    } else {
      throw new IllegalArgumentException("not a Keystone v3 method: " + c.method());
    }
    return root;
  }

  private static void password(ObjectNode identity, Credentials.User u, Secret password) {
    identity.putArray("methods").add("password");
    ObjectNode user = user(u);
    user.put("password", password.reveal());
    identity.putObject("password").set("user", user);
  }

  private static ObjectNode user(Credentials.User u) {
    ObjectNode user = JSON.createObjectNode();
    if (u.id() != null) {
      user.put("id", u.id());
    } else {
      user.put("name", u.name());
      user.set("domain", domain(u.domainId(), u.domainName()));
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

  private AuthToken v2(Credentials.V2Password c) {
    String what = "Keystone v2.0 authentication as " + who();
    Access access;
    try {
      var b =
          OSFactory.builderV2()
              .endpoint(cfg.authUrl().toString())
              .credentials(c.user().name(), c.password().reveal())
              .perspective(facing())
              .withConfig(transport);
      if (c.project().id() != null) {
        b.tenantId(c.project().id());
      } else {
        b.tenantName(c.project().name());
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
