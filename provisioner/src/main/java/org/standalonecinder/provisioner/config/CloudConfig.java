package org.standalonecinder.provisioner.config;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import org.standalonecinder.provisioner.cinder.Microversion;

/**
 * The resolved, validated cloud configuration: how to authenticate and where Cinder is.
 *
 * <p>Built once at start-up by {@link CloudConfigLoader}; every rule that can be checked without
 * the network is checked here, and a failure names the key and the source it came from. Secrets are
 * {@link Secret}s, so {@link #toString()} and {@link #describe()} never show them.
 *
 * @param auth how to authenticate
 * @param authUrl Keystone's URL (null for noauth)
 * @param cinderEndpoint the Cinder API root for noauth, e.g. {@code http://cinder:8776/v3}
 * @param username the user's name
 * @param userId the user's id
 * @param password the user's password
 * @param projectId the project (tenant) id
 * @param projectName the project (tenant) name
 * @param userDomainId the user's domain id
 * @param userDomainName the user's domain name
 * @param projectDomainId the project's domain id
 * @param projectDomainName the project's domain name
 * @param trustId the trust to scope to
 * @param applicationCredentialId the application credential's id
 * @param applicationCredentialName the application credential's name
 * @param applicationCredentialSecret the application credential's secret
 * @param region the catalog region, or null for any
 * @param endpointInterface the catalog interface: public, internal or admin
 * @param caFile a PEM bundle of CAs to trust instead of the JVM's, or null
 * @param tlsInsecure whether to skip TLS verification (for tests only)
 * @param ignoreVolumeAz whether to create volumes without an availability zone
 * @param requestTimeout the timeout of one HTTP call
 * @param maxMicroversion the newest microversion to use even if the server offers more
 * @param maxConcurrentRequests how many Cinder calls may run at once
 * @param sources where each key came from
 */
public record CloudConfig(
    AuthMethod auth,
    URI authUrl,
    URI cinderEndpoint,
    String username,
    String userId,
    Secret password,
    String projectId,
    String projectName,
    String userDomainId,
    String userDomainName,
    String projectDomainId,
    String projectDomainName,
    String trustId,
    String applicationCredentialId,
    String applicationCredentialName,
    Secret applicationCredentialSecret,
    String region,
    String endpointInterface,
    Path caFile,
    boolean tlsInsecure,
    boolean ignoreVolumeAz,
    Duration requestTimeout,
    Microversion maxMicroversion,
    int maxConcurrentRequests,
    Map<ConfigKey, String> sources) {

  /** How the client authenticates. */
  public enum AuthMethod {
    /** Cinder's noauth middleware: {@code X-Auth-Token: user:project}, no Keystone. */
    NOAUTH,
    /** Keystone v2.0 password (legacy clouds). */
    V2_PASSWORD,
    /** Keystone v3 password, scoped to a project. */
    V3_PASSWORD,
    /** Keystone v3 application credential (already scoped). */
    V3_APPLICATION_CREDENTIAL,
    /** Keystone v3 password of the trustee, scoped to a trust. */
    V3_TRUST
  }

  /** The user noauth sends when none is configured. */
  public static final String DEFAULT_NOAUTH_USER = "standalone-cinder";

  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(30);
  public static final int DEFAULT_MAX_CONCURRENT_REQUESTS = 8;

  // Cinder's project_id_regex: a noauth project outside it makes every URL a 404.
  private static final Pattern CINDER_PROJECT_ID = Pattern.compile("[0-9a-f-]+");

  public CloudConfig {
    Objects.requireNonNull(auth, "auth");
    Map<ConfigKey, String> ordered = new EnumMap<>(ConfigKey.class);
    ordered.putAll(sources);
    // Key order, so that the start-up log reads like the configuration reference.
    sources = java.util.Collections.unmodifiableMap(ordered);
  }

  /** Validates and types the merged settings. */
  public static CloudConfig from(Map<ConfigKey, Setting> s) {
    Reader r = new Reader(s);
    URI authUrl = r.uri(ConfigKey.AUTH_URL);
    URI cinderEndpoint = r.uri(ConfigKey.CINDER_ENDPOINT);

    String bsVersion = r.get(ConfigKey.BS_VERSION);
    if (bsVersion != null && !List.of("v3", "auto", "3").contains(bsVersion.toLowerCase())) {
      throw r.error(
          ConfigKey.BS_VERSION,
          "is '"
              + bsVersion
              + "' but only the v3 API exists on current Cinder (v1 and v2 were removed);"
              + " use v3 or auto");
    }

    String domainId = r.get(ConfigKey.DOMAIN_ID);
    String domainName = r.get(ConfigKey.DOMAIN_NAME);
    String userDomainId = firstNonNull(r.get(ConfigKey.USER_DOMAIN_ID), domainId);
    String userDomainName = firstNonNull(r.get(ConfigKey.USER_DOMAIN_NAME), domainName);
    String projectDomainId = firstNonNull(r.get(ConfigKey.PROJECT_DOMAIN_ID), domainId);
    String projectDomainName = firstNonNull(r.get(ConfigKey.PROJECT_DOMAIN_NAME), domainName);

    AuthMethod auth = r.authMethod(authUrl, cinderEndpoint);
    String projectId = r.get(ConfigKey.TENANT_ID);
    String projectName = r.get(ConfigKey.TENANT_NAME);

    switch (auth) {
      case NOAUTH -> {
        r.forbid(
            "noauth (cinder-endpoint) talks to Cinder without Keystone",
            ConfigKey.PASSWORD,
            ConfigKey.TRUST_ID,
            ConfigKey.APPLICATION_CREDENTIAL_ID,
            ConfigKey.APPLICATION_CREDENTIAL_NAME,
            ConfigKey.APPLICATION_CREDENTIAL_SECRET);
        if (projectId == null) {
          throw r.missing(
              ConfigKey.TENANT_ID,
              "noauth needs the project id that Cinder files the volumes under");
        }
        if (!CINDER_PROJECT_ID.matcher(projectId).matches()) {
          throw r.error(
              ConfigKey.TENANT_ID,
              "is '"
                  + projectId
                  + "' but Cinder only routes project ids made of lower-case hex digits and"
                  + " dashes ([0-9a-f-]+), so every call would get 404; use an id such as a"
                  + " UUID, not a project name");
        }
      }
      case V2_PASSWORD -> {
        r.forbid(
            "Keystone v2.0 has no domains, trusts or application credentials",
            ConfigKey.DOMAIN_ID,
            ConfigKey.DOMAIN_NAME,
            ConfigKey.USER_DOMAIN_ID,
            ConfigKey.USER_DOMAIN_NAME,
            ConfigKey.PROJECT_DOMAIN_ID,
            ConfigKey.PROJECT_DOMAIN_NAME,
            ConfigKey.TRUST_ID,
            ConfigKey.APPLICATION_CREDENTIAL_ID,
            ConfigKey.APPLICATION_CREDENTIAL_NAME,
            ConfigKey.APPLICATION_CREDENTIAL_SECRET);
        r.requireUser();
        r.require(ConfigKey.PASSWORD, "password authentication needs a password");
        if (projectId == null && projectName == null) {
          throw r.missing(ConfigKey.TENANT_ID, "set tenant-id or tenant-name");
        }
      }
      case V3_PASSWORD -> {
        r.requireUser();
        r.require(ConfigKey.PASSWORD, "password authentication needs a password");
        if (projectId == null && projectName == null) {
          throw r.missing(
              ConfigKey.TENANT_ID,
              "set tenant-id or tenant-name: the token must be project-scoped");
        }
      }
      case V3_TRUST -> {
        r.forbid(
            "a trust carries its own project scope",
            ConfigKey.TENANT_ID,
            ConfigKey.TENANT_NAME,
            ConfigKey.APPLICATION_CREDENTIAL_ID,
            ConfigKey.APPLICATION_CREDENTIAL_NAME,
            ConfigKey.APPLICATION_CREDENTIAL_SECRET);
        r.requireUser();
        r.require(ConfigKey.PASSWORD, "the trustee authenticates with a password");
      }
      case V3_APPLICATION_CREDENTIAL -> {
        r.forbid(
            "an application credential is already scoped and replaces the password",
            ConfigKey.PASSWORD,
            ConfigKey.TENANT_ID,
            ConfigKey.TENANT_NAME,
            ConfigKey.TRUST_ID);
        r.require(
            ConfigKey.APPLICATION_CREDENTIAL_SECRET, "an application credential needs its secret");
        if (r.get(ConfigKey.APPLICATION_CREDENTIAL_ID) == null) {
          r.requireUser();
        }
      }
      default -> throw new IllegalStateException(auth.name());
    }
    if (auth == AuthMethod.V3_PASSWORD || auth == AuthMethod.V3_TRUST) {
      // Keystone cannot find a user or project by name without its domain; "default" is the
      // domain every Keystone has, the one the OpenStack clients fall back to.
      if (userDomainId == null && userDomainName == null) {
        userDomainId = "default";
      }
      if (projectName != null && projectDomainId == null && projectDomainName == null) {
        projectDomainId = "default";
      }
    }

    String iface = r.get(ConfigKey.INTERFACE);
    if (iface == null) {
      iface = "public";
    }
    iface = iface.toLowerCase(Locale.ROOT).replace("url", "");
    if (!List.of("public", "internal", "admin").contains(iface)) {
      throw r.error(ConfigKey.INTERFACE, "must be public, internal or admin");
    }

    Path caFile = null;
    String ca = r.get(ConfigKey.CA_FILE);
    if (ca != null) {
      caFile = Path.of(ca);
      if (!Files.isReadable(caFile)) {
        throw r.error(
            ConfigKey.CA_FILE, "names " + ca + ", which does not exist or is not readable");
      }
    }
    boolean insecure = r.bool(ConfigKey.TLS_INSECURE, false);
    if (insecure && caFile != null) {
      throw r.error(
          ConfigKey.TLS_INSECURE, "and ca-file contradict each other: verify with the CA, or not");
    }

    Duration timeout = r.seconds(ConfigKey.REQUEST_TIMEOUT, DEFAULT_REQUEST_TIMEOUT);
    Microversion maxMv = Microversion.NEWEST_KNOWN;
    String mv = r.get(ConfigKey.MAX_MICROVERSION);
    if (mv != null) {
      try {
        maxMv = Microversion.parse(mv);
      } catch (IllegalArgumentException e) {
        throw r.error(ConfigKey.MAX_MICROVERSION, "is '" + mv + "'; expected e.g. 3.44");
      }
      if (maxMv.major() != 3) {
        throw r.error(ConfigKey.MAX_MICROVERSION, "must be a 3.x version");
      }
    }
    int maxConcurrent =
        r.positiveInt(ConfigKey.MAX_CONCURRENT_REQUESTS, DEFAULT_MAX_CONCURRENT_REQUESTS);

    Map<ConfigKey, String> sources = new EnumMap<>(ConfigKey.class);
    s.forEach((k, v) -> sources.put(k, v.source()));
    return new CloudConfig(
        auth,
        authUrl,
        cinderEndpoint,
        r.get(ConfigKey.USERNAME),
        r.get(ConfigKey.USER_ID),
        Secret.of(r.get(ConfigKey.PASSWORD)),
        projectId,
        projectName,
        userDomainId,
        userDomainName,
        projectDomainId,
        projectDomainName,
        r.get(ConfigKey.TRUST_ID),
        r.get(ConfigKey.APPLICATION_CREDENTIAL_ID),
        r.get(ConfigKey.APPLICATION_CREDENTIAL_NAME),
        Secret.of(r.get(ConfigKey.APPLICATION_CREDENTIAL_SECRET)),
        r.get(ConfigKey.REGION),
        iface,
        caFile,
        insecure,
        r.bool(ConfigKey.IGNORE_VOLUME_AZ, false),
        timeout,
        maxMv,
        maxConcurrent,
        sources);
  }

  /** The user noauth puts before the colon of its token. */
  public String noauthUser() {
    return firstNonNull(userId, firstNonNull(username, DEFAULT_NOAUTH_USER));
  }

  /** One line per setting with its source, secrets masked: for the start-up log. */
  public List<String> describe() {
    List<String> lines = new ArrayList<>();
    sources.forEach(
        (k, src) -> lines.add(k.display() + " = " + shown(k) + "   (from " + src + ")"));
    return lines;
  }

  private String shown(ConfigKey k) {
    if (k.secret()) {
      return "***";
    }
    return switch (k) {
      case AUTH_URL -> String.valueOf(authUrl);
      case CINDER_ENDPOINT -> String.valueOf(cinderEndpoint);
      case USERNAME -> username;
      case USER_ID -> userId;
      case TENANT_ID -> projectId;
      case TENANT_NAME -> projectName;
      case DOMAIN_ID, USER_DOMAIN_ID -> userDomainId;
      case DOMAIN_NAME, USER_DOMAIN_NAME -> userDomainName;
      case PROJECT_DOMAIN_ID -> projectDomainId;
      case PROJECT_DOMAIN_NAME -> projectDomainName;
      case BS_VERSION -> "v3";
      case TRUST_ID -> trustId;
      case APPLICATION_CREDENTIAL_ID -> applicationCredentialId;
      case APPLICATION_CREDENTIAL_NAME -> applicationCredentialName;
      case REGION -> region;
      case INTERFACE -> endpointInterface;
      case CA_FILE -> String.valueOf(caFile);
      case TLS_INSECURE -> String.valueOf(tlsInsecure);
      case IGNORE_VOLUME_AZ -> String.valueOf(ignoreVolumeAz);
      case REQUEST_TIMEOUT -> requestTimeout.toSeconds() + "s";
      case MAX_MICROVERSION -> String.valueOf(maxMicroversion);
      case MAX_CONCURRENT_REQUESTS -> String.valueOf(maxConcurrentRequests);
      default -> throw new IllegalStateException("no display for " + k);
    };
  }

  private static String firstNonNull(String a, String b) {
    return a != null ? a : b;
  }

  /** Typed access to the raw settings, with errors that name key and source. */
  private static final class Reader {
    private final Map<ConfigKey, Setting> s;

    Reader(Map<ConfigKey, Setting> s) {
      this.s = s;
    }

    String get(ConfigKey k) {
      Setting v = s.get(k);
      return v == null ? null : v.value();
    }

    ConfigException error(ConfigKey k, String what) {
      Setting v = s.get(k);
      String where = v == null ? k.display() : k.display() + " (from " + v.source() + ")";
      return new ConfigException(where + " " + what);
    }

    ConfigException missing(ConfigKey k, String why) {
      return new ConfigException(k.display() + " is missing: " + why);
    }

    void require(ConfigKey k, String why) {
      if (get(k) == null) {
        throw missing(k, why);
      }
    }

    void requireUser() {
      if (get(ConfigKey.USERNAME) == null && get(ConfigKey.USER_ID) == null) {
        throw new ConfigException(
            "[Global] username and user-id are both missing: set one of them");
      }
    }

    void forbid(String why, ConfigKey... keys) {
      for (ConfigKey k : keys) {
        if (s.containsKey(k)) {
          throw error(k, "must not be set: " + why);
        }
      }
    }

    AuthMethod authMethod(URI authUrl, URI cinderEndpoint) {
      if (authUrl != null && cinderEndpoint != null) {
        throw new ConfigException(
            "contradiction: "
                + ConfigKey.AUTH_URL.display()
                + " (from "
                + s.get(ConfigKey.AUTH_URL).source()
                + ") selects Keystone and "
                + ConfigKey.CINDER_ENDPOINT.display()
                + " (from "
                + s.get(ConfigKey.CINDER_ENDPOINT).source()
                + ") selects noauth; set only one");
      }
      if (cinderEndpoint != null) {
        return AuthMethod.NOAUTH;
      }
      if (authUrl == null) {
        throw new ConfigException(
            "no cloud configured: set [Global] auth-url (Keystone) or [Global] cinder-endpoint"
                + " (Cinder with noauth), in cloud.conf, as OS_AUTH_URL / OS_CINDER_ENDPOINT,"
                + " or through OS_CLOUD and clouds.yaml");
      }
      String path = authUrl.getPath() == null ? "" : authUrl.getPath();
      boolean v2 = path.matches(".*/v2(\\.0)?/?");
      boolean appCred =
          get(ConfigKey.APPLICATION_CREDENTIAL_ID) != null
              || get(ConfigKey.APPLICATION_CREDENTIAL_NAME) != null;
      if (v2) {
        return AuthMethod.V2_PASSWORD;
      }
      if (appCred) {
        return AuthMethod.V3_APPLICATION_CREDENTIAL;
      }
      if (get(ConfigKey.TRUST_ID) != null) {
        return AuthMethod.V3_TRUST;
      }
      return AuthMethod.V3_PASSWORD;
    }

    URI uri(ConfigKey k) {
      String v = get(k);
      if (v == null) {
        return null;
      }
      URI u;
      try {
        u = URI.create(v);
      } catch (IllegalArgumentException e) {
        throw error(k, "is not a URL: " + e.getMessage());
      }
      if (u.getScheme() == null
          || !(u.getScheme().equals("http") || u.getScheme().equals("https"))
          || u.getHost() == null) {
        throw error(k, "must be an http:// or https:// URL with a host, was '" + v + "'");
      }
      return u;
    }

    boolean bool(ConfigKey k, boolean dflt) {
      String v = get(k);
      if (v == null) {
        return dflt;
      }
      return switch (v.toLowerCase(Locale.ROOT)) {
        case "true", "yes", "1", "on" -> true;
        case "false", "no", "0", "off" -> false;
        default -> throw error(k, "is '" + v + "'; expected true or false");
      };
    }

    Duration seconds(ConfigKey k, Duration dflt) {
      String v = get(k);
      if (v == null) {
        return dflt;
      }
      String n = v.endsWith("s") ? v.substring(0, v.length() - 1) : v;
      try {
        long secs = Long.parseLong(n.trim());
        if (secs < 1 || secs > 3600) {
          throw error(k, "must be between 1 and 3600 seconds, was " + v);
        }
        return Duration.ofSeconds(secs);
      } catch (NumberFormatException e) {
        throw error(k, "is '" + v + "'; expected a number of seconds such as 30");
      }
    }

    int positiveInt(ConfigKey k, int dflt) {
      String v = get(k);
      if (v == null) {
        return dflt;
      }
      try {
        int i = Integer.parseInt(v.trim());
        if (i < 1 || i > 256) {
          throw error(k, "must be between 1 and 256, was " + v);
        }
        return i;
      } catch (NumberFormatException e) {
        throw error(k, "is '" + v + "'; expected a whole number");
      }
    }
  }
}
