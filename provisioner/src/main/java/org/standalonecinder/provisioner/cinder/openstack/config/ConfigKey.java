package org.standalonecinder.provisioner.cinder.openstack.config;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Every key the cloud configuration accepts, with its INI section, its {@code OS_*} environment
 * variable and its clouds.yaml name. One table, so the three sources cannot drift apart; the
 * configuration reference in docs/configuration.md lists the same rows.
 */
public enum ConfigKey {
  AUTH_URL("Global", "auth-url", List.of(), "OS_AUTH_URL", "auth.auth_url", false),
  USERNAME("Global", "username", List.of("user-name"), "OS_USERNAME", "auth.username", false),
  USER_ID("Global", "user-id", List.of(), "OS_USER_ID", "auth.user_id", false),
  PASSWORD("Global", "password", List.of(), "OS_PASSWORD", "auth.password", true),
  TENANT_ID(
      "Global",
      "tenant-id",
      List.of("project-id"),
      "OS_PROJECT_ID",
      "auth.project_id",
      false,
      "OS_TENANT_ID"),
  TENANT_NAME(
      "Global",
      "tenant-name",
      List.of("project-name"),
      "OS_PROJECT_NAME",
      "auth.project_name",
      false,
      "OS_TENANT_NAME"),
  DOMAIN_ID("Global", "domain-id", List.of(), "OS_DOMAIN_ID", "auth.domain_id", false),
  DOMAIN_NAME("Global", "domain-name", List.of(), "OS_DOMAIN_NAME", "auth.domain_name", false),
  USER_DOMAIN_ID(
      "Global", "user-domain-id", List.of(), "OS_USER_DOMAIN_ID", "auth.user_domain_id", false),
  USER_DOMAIN_NAME(
      "Global",
      "user-domain-name",
      List.of(),
      "OS_USER_DOMAIN_NAME",
      "auth.user_domain_name",
      false),
  PROJECT_DOMAIN_ID(
      "Global",
      "project-domain-id",
      List.of("tenant-domain-id"),
      "OS_PROJECT_DOMAIN_ID",
      "auth.project_domain_id",
      false),
  PROJECT_DOMAIN_NAME(
      "Global",
      "project-domain-name",
      List.of("tenant-domain-name"),
      "OS_PROJECT_DOMAIN_NAME",
      "auth.project_domain_name",
      false),
  TRUST_ID("Global", "trust-id", List.of(), "OS_TRUST_ID", "auth.trust_id", false),
  APPLICATION_CREDENTIAL_ID(
      "Global",
      "application-credential-id",
      List.of(),
      "OS_APPLICATION_CREDENTIAL_ID",
      "auth.application_credential_id",
      false),
  APPLICATION_CREDENTIAL_NAME(
      "Global",
      "application-credential-name",
      List.of(),
      "OS_APPLICATION_CREDENTIAL_NAME",
      "auth.application_credential_name",
      false),
  APPLICATION_CREDENTIAL_SECRET(
      "Global",
      "application-credential-secret",
      List.of(),
      "OS_APPLICATION_CREDENTIAL_SECRET",
      "auth.application_credential_secret",
      true),
  REGION("Global", "region", List.of(), "OS_REGION_NAME", "region_name", false),
  INTERFACE("Global", "interface", List.of("os-endpoint-type"), "OS_INTERFACE", "interface", false),
  CA_FILE("Global", "ca-file", List.of(), "OS_CACERT", "cacert", false),
  TLS_INSECURE("Global", "tls-insecure", List.of(), "OS_INSECURE", null, false),
  CINDER_ENDPOINT(
      "Global",
      "cinder-endpoint",
      List.of(),
      "OS_CINDER_ENDPOINT",
      "block_storage_endpoint_override",
      false),
  BS_VERSION("BlockStorage", "bs-version", List.of(), null, "volume_api_version", false),
  IGNORE_VOLUME_AZ("BlockStorage", "ignore-volume-az", List.of(), null, null, false),
  REQUEST_TIMEOUT("BlockStorage", "request-timeout", List.of(), null, "api_timeout", false),
  MAX_MICROVERSION("BlockStorage", "max-microversion", List.of(), null, null, false),
  MAX_CONCURRENT_REQUESTS("BlockStorage", "max-concurrent-requests", List.of(), null, null, false);

  private final String section;
  private final String iniName;
  private final List<String> iniAliases;
  private final String envName;
  private final List<String> envAliases;
  private final String cloudsYamlPath;
  private final boolean secret;

  ConfigKey(
      String section,
      String iniName,
      List<String> iniAliases,
      String envName,
      String cloudsYamlPath,
      boolean secret,
      String... envAliases) {
    this.section = section;
    this.iniName = iniName;
    this.iniAliases = iniAliases;
    this.envName = envName;
    this.cloudsYamlPath = cloudsYamlPath;
    this.secret = secret;
    this.envAliases = Arrays.asList(envAliases);
  }

  public String section() {
    return section;
  }

  public String iniName() {
    return iniName;
  }

  public List<String> iniAliases() {
    return iniAliases;
  }

  /** The main {@code OS_*} variable, or empty when the key has none. */
  public Optional<String> envName() {
    return Optional.ofNullable(envName);
  }

  /** Older spellings of the variable ({@code OS_TENANT_ID}). */
  public List<String> envAliases() {
    return envAliases;
  }

  /** The dotted path inside a clouds.yaml cloud, or empty when clouds.yaml has no such key. */
  public Optional<String> cloudsYamlPath() {
    return Optional.ofNullable(cloudsYamlPath);
  }

  /** Whether the value must never be shown. */
  public boolean secret() {
    return secret;
  }

  /** {@code [Global] auth-url}, the way error messages name a key. */
  public String display() {
    return "[" + section + "] " + iniName;
  }

  /** The key for an INI name (or alias) in a section, if any. */
  public static Optional<ConfigKey> fromIni(String section, String name) {
    String n = name.trim().toLowerCase(Locale.ROOT);
    for (ConfigKey k : values()) {
      if (k.section.equalsIgnoreCase(section)
          && (k.iniName.equals(n) || k.iniAliases.contains(n))) {
        return Optional.of(k);
      }
    }
    return Optional.empty();
  }
}
