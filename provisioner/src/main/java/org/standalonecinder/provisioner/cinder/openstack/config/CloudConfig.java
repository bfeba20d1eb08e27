package org.standalonecinder.provisioner.cinder.openstack.config;

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
import org.standalonecinder.provisioner.cinder.Microversion;

/**
 * The resolved, validated cloud configuration: how to authenticate and where Cinder is.
 *
 * <p>Built once at start-up by {@link CloudConfigLoader}; every rule that can be checked without
 * the network is checked here, and a failure names the key and the source it came from. Secrets are
 * {@link Secret}s, so {@link #toString()} and {@link #describe()} never show them.
 *
 * @param credentials who the provisioner is to Cinder, one variant per way of authenticating
 * @param authUrl Keystone's URL (null for noauth)
 * @param cinderEndpoint the Cinder API root for noauth, e.g. {@code http://cinder:8776/v3}
 * @param region the catalog region, or null for any
 * @param endpointInterface the catalog interface: public, internal or admin
 * @param caFile a PEM bundle of CAs to trust instead of the JVM's, or null
 * @param tlsInsecure whether to skip TLS verification (for tests only)
 * @param ignoreVolumeAz whether to create volumes without an availability zone
 * @param requestTimeout the timeout of one HTTP call
 * @param maxMicroversion the newest microversion to use even if the server offers more
 * @param maxConcurrentRequests how many Cinder calls may run at once
 * @param sources where each key came from
 * @param ignored what the cloud.conf holds for cloud-provider-openstack's other parts, one line
 *     each: accepted and not read
 */
public record CloudConfig(
    Credentials credentials,
    URI authUrl,
    URI cinderEndpoint,
    String region,
    String endpointInterface,
    Path caFile,
    boolean tlsInsecure,
    boolean ignoreVolumeAz,
    Duration requestTimeout,
    Microversion maxMicroversion,
    int maxConcurrentRequests,
    Map<ConfigKey, String> sources,
    List<String> ignored) {

  /** The catalog interface to use: public (the default), internal or admin. */
  private static String endpointInterface(SettingsReader r) {
    String iface = r.get(ConfigKey.INTERFACE);
    if (iface == null) {
      iface = "public";
    }
    iface = iface.toLowerCase(Locale.ROOT).replace("url", "");
    if (!List.of("public", "internal", "admin").contains(iface)) {
      throw r.error(ConfigKey.INTERFACE, "must be public, internal or admin");
    }
    return iface;
  }

  /** The CA file to verify Cinder and Keystone with, readable; null for the system's. */
  private static Path caFile(SettingsReader r) {
    Path caFile = null;
    String ca = r.get(ConfigKey.CA_FILE);
    if (ca != null) {
      caFile = Path.of(ca);
      if (!Files.isReadable(caFile)) {
        throw r.error(
            ConfigKey.CA_FILE, "names " + ca + ", which does not exist or is not readable");
      }
    }
    return caFile;
  }

  /** The newest microversion the provisioner may use. */
  private static Microversion maxMicroversion(SettingsReader r) {
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
    return maxMv;
  }

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

  /**
   * Cinder's own wait for cinder-volume (its rpc_response_timeout, 60 s): an attachment or an
   * export is answered only once cinder-volume has made it, and a client that gave up sooner would
   * undo, and then repeat, what a loaded Cinder was about to finish.
   */
  public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(60);

  public static final int DEFAULT_MAX_CONCURRENT_REQUESTS = 8;

  public CloudConfig {
    Objects.requireNonNull(credentials, "credentials");
    Map<ConfigKey, String> ordered = new EnumMap<>(ConfigKey.class);
    ordered.putAll(sources);
    // Key order, so that the start-up log reads like the configuration reference.
    sources = java.util.Collections.unmodifiableMap(ordered);
    ignored = List.copyOf(ignored);
  }

  /** Validates and types the merged settings. */
  public static CloudConfig from(Map<ConfigKey, Setting> s) {
    return from(s, List.of());
  }

  /**
   * Validates and types the merged settings.
   *
   * @param ignored the lines for what the cloud.conf holds that this project does not read
   */
  public static CloudConfig from(Map<ConfigKey, Setting> s, List<String> ignored) {
    SettingsReader r = new SettingsReader(s);
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

    Credentials credentials = Credentials.read(r, r.authMethod(authUrl, cinderEndpoint));

    String iface = endpointInterface(r);

    Path caFile = caFile(r);
    boolean insecure = r.bool(ConfigKey.TLS_INSECURE, false);
    if (insecure && caFile != null) {
      throw r.error(
          ConfigKey.TLS_INSECURE, "and ca-file contradict each other: verify with the CA, or not");
    }

    Duration timeout = r.seconds(ConfigKey.REQUEST_TIMEOUT, DEFAULT_REQUEST_TIMEOUT);
    Microversion maxMv = maxMicroversion(r);
    int maxConcurrent =
        r.positiveInt(ConfigKey.MAX_CONCURRENT_REQUESTS, DEFAULT_MAX_CONCURRENT_REQUESTS);

    Map<ConfigKey, String> sources = new EnumMap<>(ConfigKey.class);
    s.forEach((k, v) -> sources.put(k, v.source()));
    return new CloudConfig(
        credentials,
        authUrl,
        cinderEndpoint,
        r.get(ConfigKey.REGION),
        iface,
        caFile,
        insecure,
        r.bool(ConfigKey.IGNORE_VOLUME_AZ, false),
        timeout,
        maxMv,
        maxConcurrent,
        sources,
        ignored);
  }

  /** How the client authenticates. */
  public AuthMethod auth() {
    return credentials.method();
  }

  /** One line per setting with its source, secrets masked: for the start-up log. */
  public List<String> describe() {
    List<String> lines = new ArrayList<>();
    sources.forEach(
        (k, src) -> lines.add(k.display() + " = " + shown(k) + "   (from " + src + ")"));
    ignored.forEach(i -> lines.add("ignored: " + i));
    return lines;
  }

  private String shown(ConfigKey k) {
    if (k.secret()) {
      return "***";
    }
    return switch (k) {
      case AUTH_URL -> String.valueOf(authUrl);
      case CINDER_ENDPOINT -> String.valueOf(cinderEndpoint);
      case BS_VERSION -> "v3";
      case REGION -> region;
      case INTERFACE -> endpointInterface;
      case CA_FILE -> String.valueOf(caFile);
      case TLS_INSECURE -> String.valueOf(tlsInsecure);
      case IGNORE_VOLUME_AZ -> String.valueOf(ignoreVolumeAz);
      case REQUEST_TIMEOUT -> requestTimeout.toSeconds() + "s";
      case MAX_MICROVERSION -> String.valueOf(maxMicroversion);
      case MAX_CONCURRENT_REQUESTS -> String.valueOf(maxConcurrentRequests);
      default -> {
        String v = credentials.shown(k);
        yield v != null ? v : "(not used by " + credentials.method() + ")";
      }
    };
  }
}
