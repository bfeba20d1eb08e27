package org.standalonecinder.provisioner.cinder.openstack.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.standalonecinder.provisioner.cinder.Microversion;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig.AuthMethod;

/** Every key, the precedence of the sources, and every rejection, one named row each. */
class CloudConfigTest {

  @TempDir Path dir;

  private static final String NOAUTH =
      "[Global]\ncinder-endpoint = http://cinder:8776/v3\ntenant-id = 5f3c1a2b\n";
  private static final String KEYSTONE =
      "[Global]\nauth-url = https://keystone:5000/v3\nusername = prov\npassword = pw\n"
          + "tenant-name = k8s\n";

  private CloudConfig load(String ini, Map<String, String> env) throws IOException {
    Path file = null;
    if (ini != null) {
      file = dir.resolve("cloud.conf");
      Files.writeString(file, ini);
    }
    Map<String, String> e = new HashMap<>(env);
    e.putIfAbsent("HOME", dir.toString());
    return CloudConfigLoader.load(file, e);
  }

  private static Arguments ok(
      String name, String ini, Map<String, String> env, Consumer<CloudConfig> check) {
    return Arguments.of(name, ini, env, check);
  }

  static Stream<Arguments> accepted() {
    return Stream.of(
        ok(
            "noauth from cloud.conf",
            NOAUTH,
            Map.of(),
            c -> {
              assertThat(c.auth()).isEqualTo(AuthMethod.NOAUTH);
              assertThat(c.cinderEndpoint()).hasToString("http://cinder:8776/v3");
              assertThat(projectId(c)).isEqualTo("5f3c1a2b");
              assertThat(((Credentials.NoAuth) c.credentials()).user())
                  .isEqualTo(Credentials.NoAuth.DEFAULT_USER);
            }),
        ok(
            "noauth from env",
            null,
            Map.of("OS_CINDER_ENDPOINT", "http://c:8776/v3", "OS_PROJECT_ID", "abc-123"),
            c -> assertThat(c.auth()).isEqualTo(AuthMethod.NOAUTH)),
        ok(
            "noauth user from username",
            NOAUTH + "username = alice\n",
            Map.of(),
            c -> assertThat(((Credentials.NoAuth) c.credentials()).user()).isEqualTo("alice")),
        ok(
            "OS_TENANT_ID is the old name of OS_PROJECT_ID",
            null,
            Map.of("OS_CINDER_ENDPOINT", "http://c:8776/v3", "OS_TENANT_ID", "abc"),
            c -> assertThat(projectId(c)).isEqualTo("abc")),
        ok(
            "project-id is an alias of tenant-id",
            "[Global]\ncinder-endpoint = http://c/v3\nproject-id = abc\n",
            Map.of(),
            c -> assertThat(projectId(c)).isEqualTo("abc")),
        ok(
            "v3 password with default domains",
            KEYSTONE,
            Map.of(),
            c -> {
              assertThat(c.auth()).isEqualTo(AuthMethod.V3_PASSWORD);
              assertThat(user(c).domainId()).isEqualTo("default");
              assertThat(project(c).domainId()).isEqualTo("default");
              assertThat(password(c).reveal()).isEqualTo("pw");
              assertThat(c.endpointInterface()).isEqualTo("public");
            }),
        ok(
            "domain-name applies to user and project",
            KEYSTONE + "domain-name = Corp\n",
            Map.of(),
            c -> {
              assertThat(user(c).domainName()).isEqualTo("Corp");
              assertThat(project(c).domainName()).isEqualTo("Corp");
              assertThat(user(c).domainId()).isNull();
            }),
        ok(
            "domain-id applies to user and project",
            KEYSTONE + "domain-id = d1\n",
            Map.of(),
            c -> {
              assertThat(user(c).domainId()).isEqualTo("d1");
              assertThat(project(c).domainId()).isEqualTo("d1");
            }),
        ok(
            "specific domains win over domain-name",
            KEYSTONE + "domain-name = Corp\nuser-domain-name = Users\nproject-domain-id = p1\n",
            Map.of(),
            c -> {
              assertThat(user(c).domainName()).isEqualTo("Users");
              assertThat(project(c).domainId()).isEqualTo("p1");
            }),
        ok(
            "user-id instead of username",
            "[Global]\nauth-url = http://k/v3\nuser-id = u1\npassword = pw\ntenant-id = t1\n",
            Map.of(),
            c -> assertThat(user(c).id()).isEqualTo("u1")),
        ok(
            "v2 password from a /v2.0 URL",
            "[Global]\nauth-url = http://k:5000/v2.0\nusername = u\npassword = p\ntenant-name = t\n",
            Map.of(),
            c -> assertThat(c.auth()).isEqualTo(AuthMethod.V2_PASSWORD)),
        ok(
            "application credential by id",
            "[Global]\nauth-url = http://k/v3\napplication-credential-id = ac\n"
                + "application-credential-secret = s\n",
            Map.of(),
            c -> {
              assertThat(c.auth()).isEqualTo(AuthMethod.V3_APPLICATION_CREDENTIAL);
              assertThat(((Credentials.V3ApplicationCredential) c.credentials()).secret().reveal())
                  .isEqualTo("s");
            }),
        ok(
            "application credential by name and user",
            "[Global]\nauth-url = http://k/v3\napplication-credential-name = ac\n"
                + "application-credential-secret = s\nusername = u\nuser-domain-name = D\n",
            Map.of(),
            c ->
                assertThat(((Credentials.V3ApplicationCredential) c.credentials()).name())
                    .isEqualTo("ac")),
        ok(
            "application credential from env",
            null,
            Map.of(
                "OS_AUTH_URL", "http://k/v3",
                "OS_APPLICATION_CREDENTIAL_ID", "ac",
                "OS_APPLICATION_CREDENTIAL_SECRET", "s"),
            c -> assertThat(c.auth()).isEqualTo(AuthMethod.V3_APPLICATION_CREDENTIAL)),
        ok(
            "trust",
            "[Global]\nauth-url = http://k/v3\nusername = u\npassword = p\ntrust-id = tr\n",
            Map.of(),
            c -> {
              assertThat(c.auth()).isEqualTo(AuthMethod.V3_TRUST);
              assertThat(((Credentials.V3Trust) c.credentials()).trustId()).isEqualTo("tr");
            }),
        ok(
            "region and interface",
            KEYSTONE + "region = RegionTwo\ninterface = internalURL\n",
            Map.of(),
            c -> {
              assertThat(c.region()).isEqualTo("RegionTwo");
              assertThat(c.endpointInterface()).isEqualTo("internal");
            }),
        ok(
            "tls-insecure",
            KEYSTONE + "tls-insecure = yes\n",
            Map.of(),
            c -> assertThat(c.tlsInsecure()).isTrue()),
        ok(
            "BlockStorage options",
            KEYSTONE
                + "[BlockStorage]\nbs-version = v3\nignore-volume-az = true\nrequest-timeout = 12\n"
                + "max-microversion = 3.44\nmax-concurrent-requests = 3\n",
            Map.of(),
            c -> {
              assertThat(c.ignoreVolumeAz()).isTrue();
              assertThat(c.requestTimeout()).isEqualTo(Duration.ofSeconds(12));
              assertThat(c.maxMicroversion()).isEqualTo(new Microversion(3, 44));
              assertThat(c.maxConcurrentRequests()).isEqualTo(3);
            }),
        ok(
            "BlockStorage defaults",
            KEYSTONE,
            Map.of(),
            c -> {
              assertThat(c.ignoreVolumeAz()).isFalse();
              assertThat(c.requestTimeout()).isEqualTo(CloudConfig.DEFAULT_REQUEST_TIMEOUT);
              assertThat(c.maxMicroversion()).isEqualTo(Microversion.NEWEST_KNOWN);
              assertThat(c.maxConcurrentRequests())
                  .isEqualTo(CloudConfig.DEFAULT_MAX_CONCURRENT_REQUESTS);
            }),
        ok(
            "a quoted password keeps ; and #",
            "[Global]\nauth-url = http://k/v3\nusername = u\npassword = \"a;b #c\"\ntenant-id = t\n",
            Map.of(),
            c -> assertThat(password(c).reveal()).isEqualTo("a;b #c")),
        ok(
            "section and key names are case-insensitive",
            "[global]\nAuth-URL = http://k/v3\nUsername = u\nPassword = p\nTenant-Name = t\n",
            Map.of(),
            c -> assertThat(user(c).name()).isEqualTo("u")),
        ok(
            "precedence: cloud.conf beats env",
            KEYSTONE,
            Map.of("OS_USERNAME", "from-env", "OS_REGION_NAME", "EnvRegion"),
            c -> {
              assertThat(user(c).name()).isEqualTo("prov");
              assertThat(c.region()).isEqualTo("EnvRegion");
              assertThat(c.sources().get(ConfigKey.USERNAME)).contains("cloud.conf");
              assertThat(c.sources().get(ConfigKey.REGION)).isEqualTo("env OS_REGION_NAME");
            }),
        ok(
            "cloud-provider-openstack's cloud.conf, as its OpenStack cloud provider reads it",
            KEYSTONE
                + "tenant-domain-name = corp\nos-endpoint-type = internal\n"
                + "[BlockStorage]\nbs-version = v3\nrescan-on-resize = true\n"
                + "trust-device-path = false\nnode-volume-attach-limit = 256\n"
                + "[LoadBalancer]\nsubnet-id = abc\nuse-octavia = true\n"
                + "[Metadata]\nsearch-order = configDrive,metadataService\n"
                + "[Networking]\npublic-network-name = ext\n[Route]\nrouter-id = r1\n",
            Map.of(),
            c -> {
              assertThat(c.auth()).isEqualTo(AuthMethod.V3_PASSWORD);
              assertThat(c.sources().get(ConfigKey.PROJECT_DOMAIN_NAME))
                  .endsWith("[Global] tenant-domain-name");
              assertThat(c.endpointInterface()).isEqualTo("internal");
              assertThat(c.ignored())
                  .hasSize(7)
                  .anySatisfy(l -> assertThat(l).startsWith("[LoadBalancer] (2 key(s)) in "))
                  .anySatisfy(l -> assertThat(l).startsWith("[BlockStorage] rescan-on-resize in "))
                  .allSatisfy(l -> assertThat(l).contains("cloud-provider-openstack's"));
              assertThat(c.describe())
                  .contains("ignored: " + c.ignored().get(0))
                  .noneMatch(l -> l.contains("subnet-id") || l.contains("abc"));
            }),
        ok(
            "unknown OS_ variables are ignored",
            NOAUTH,
            Map.of("OS_COMPUTE_API_VERSION", "2.1"),
            c -> assertThat(c.auth()).isEqualTo(AuthMethod.NOAUTH)),
        ok(
            "empty values count as unset",
            NOAUTH + "region =\n",
            Map.of("OS_PASSWORD", ""),
            c -> assertThat(c.region()).isNull()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("accepted")
  void accepted(String name, String ini, Map<String, String> env, Consumer<CloudConfig> check)
      throws IOException {
    check.accept(load(ini, env));
  }

  static Stream<Arguments> rejected() {
    return Stream.of(
        Arguments.of("nothing configured", null, Map.of(), "no cloud configured"),
        Arguments.of(
            "noauth with a tenant name instead of an id",
            "[Global]\ncinder-endpoint = http://c/v3\ntenant-id = admin\n",
            Map.of(),
            "[Global] tenant-id (from "),
        Arguments.of(
            "noauth non-hex project explains why",
            "[Global]\ncinder-endpoint = http://c/v3\ntenant-id = Admin\n",
            Map.of(),
            "every call would get 404"),
        Arguments.of(
            "noauth without project",
            "[Global]\ncinder-endpoint = http://c/v3\n",
            Map.of(),
            "[Global] tenant-id is missing"),
        Arguments.of(
            "noauth with a password",
            NOAUTH + "password = x\n",
            Map.of(),
            "[Global] password (from"),
        Arguments.of(
            "auth-url and cinder-endpoint contradict",
            KEYSTONE + "cinder-endpoint = http://c/v3\n",
            Map.of(),
            "contradiction"),
        Arguments.of(
            "auth-url from env and cinder-endpoint from the file contradict",
            NOAUTH,
            Map.of("OS_AUTH_URL", "http://k/v3"),
            "env OS_AUTH_URL"),
        Arguments.of(
            "tenant-id and project-id differ in one file",
            "[Global]\ncinder-endpoint = http://c/v3\ntenant-id = aa\nproject-id = bb\n",
            Map.of(),
            "both set [Global] tenant-id to different values"),
        Arguments.of(
            "OS_PROJECT_ID and OS_TENANT_ID differ",
            null,
            Map.of(
                "OS_CINDER_ENDPOINT", "http://c/v3", "OS_PROJECT_ID", "aa", "OS_TENANT_ID", "bb"),
            "env OS_PROJECT_ID and env OS_TENANT_ID"),
        Arguments.of(
            "unknown key with a suggestion",
            NOAUTH + "tenant_id = 5f\n",
            Map.of(),
            "unknown key 'tenant_id' in [Global]; did you mean 'tenant-id'?"),
        Arguments.of(
            "key in the wrong section",
            NOAUTH + "bs-version = v3\n",
            Map.of(),
            "'bs-version' belongs in [BlockStorage]"),
        Arguments.of(
            "unknown key", NOAUTH + "frobnicate = 1\n", Map.of(), "unknown key 'frobnicate'"),
        Arguments.of(
            "unknown section",
            NOAUTH + "[Compute]\nx = 1\n",
            Map.of(),
            "unknown section [Compute]; known: [Global], [BlockStorage] (and"
                + " cloud-provider-openstack's"),
        Arguments.of(
            "tenant-domain-name and project-domain-name differ in one file",
            KEYSTONE + "tenant-domain-name = a\nproject-domain-name = b\n",
            Map.of(),
            "both set [Global] project-domain-name to different values"),
        Arguments.of(
            "a key of cloud-provider-openstack this project cannot honour is still refused",
            KEYSTONE + "cert-file = /etc/client.crt\n",
            Map.of(),
            "unknown key 'cert-file'"),
        Arguments.of(
            "settings before any section",
            "auth-url = http://k/v3\n" + KEYSTONE,
            Map.of(),
            "before the first section"),
        Arguments.of(
            "not a URL",
            "[Global]\nauth-url = keystone:5000\nusername = u\npassword = p\ntenant-id = t\n",
            Map.of(),
            "must be an http:// or https:// URL"),
        Arguments.of(
            "password auth without a password",
            "[Global]\nauth-url = http://k/v3\nusername = u\ntenant-id = t\n",
            Map.of(),
            "[Global] password is missing"),
        Arguments.of(
            "password auth without a user",
            "[Global]\nauth-url = http://k/v3\npassword = p\ntenant-id = t\n",
            Map.of(),
            "username and user-id are both missing"),
        Arguments.of(
            "password auth without a project",
            "[Global]\nauth-url = http://k/v3\nusername = u\npassword = p\n",
            Map.of(),
            "project-scoped"),
        Arguments.of(
            "application credential and a password",
            "[Global]\nauth-url = http://k/v3\napplication-credential-id = a\n"
                + "application-credential-secret = s\npassword = p\n",
            Map.of(),
            "[Global] password (from"),
        Arguments.of(
            "application credential without its secret",
            "[Global]\nauth-url = http://k/v3\napplication-credential-id = a\n",
            Map.of(),
            "application-credential-secret is missing"),
        Arguments.of(
            "application credential by name without a user",
            "[Global]\nauth-url = http://k/v3\napplication-credential-name = a\n"
                + "application-credential-secret = s\n",
            Map.of(),
            "username and user-id are both missing"),
        Arguments.of(
            "trust with a project",
            "[Global]\nauth-url = http://k/v3\nusername = u\npassword = p\ntrust-id = t\n"
                + "tenant-id = x\n",
            Map.of(),
            "a trust carries its own project scope"),
        Arguments.of(
            "v2 with a domain",
            "[Global]\nauth-url = http://k/v2.0\nusername = u\npassword = p\ntenant-id = t\n"
                + "domain-name = D\n",
            Map.of(),
            "Keystone v2.0 has no domains"),
        Arguments.of(
            "bs-version v2",
            KEYSTONE + "[BlockStorage]\nbs-version = v2\n",
            Map.of(),
            "v1 and v2 were removed"),
        Arguments.of(
            "bad interface",
            KEYSTONE + "interface = private\n",
            Map.of(),
            "must be public, internal or admin"),
        Arguments.of(
            "ca-file missing",
            KEYSTONE + "ca-file = /nonexistent/ca.pem\n",
            Map.of(),
            "does not exist or is not readable"),
        Arguments.of(
            "bad boolean", KEYSTONE + "tls-insecure = maybe\n", Map.of(), "expected true or false"),
        Arguments.of(
            "bad timeout",
            KEYSTONE + "[BlockStorage]\nrequest-timeout = soon\n",
            Map.of(),
            "expected a number of seconds"),
        Arguments.of(
            "timeout out of range",
            KEYSTONE + "[BlockStorage]\nrequest-timeout = 0\n",
            Map.of(),
            "between 1 and 3600"),
        Arguments.of(
            "bad microversion",
            KEYSTONE + "[BlockStorage]\nmax-microversion = latest\n",
            Map.of(),
            "expected e.g. 3.44"),
        Arguments.of(
            "microversion of another major",
            KEYSTONE + "[BlockStorage]\nmax-microversion = 2.1\n",
            Map.of(),
            "must be a 3.x version"),
        Arguments.of(
            "bad concurrency",
            KEYSTONE + "[BlockStorage]\nmax-concurrent-requests = 0\n",
            Map.of(),
            "between 1 and 256"),
        Arguments.of(
            "OS_CLOUD without clouds.yaml",
            null,
            Map.of("OS_CLOUD", "mine"),
            "no clouds.yaml was found"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rejected")
  void rejected(String name, String ini, Map<String, String> env, String message) {
    assertThatThrownBy(() -> load(ini, env))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(message);
  }

  @Test
  void tlsInsecureWithACaFileIsAContradiction() throws IOException {
    Path ca = Files.writeString(dir.resolve("ca.pem"), "x");
    assertThatThrownBy(
            () -> load(KEYSTONE + "tls-insecure = true\nca-file = " + ca + "\n", Map.of()))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("contradict");
  }

  @Test
  void caFileFromOsCacert() throws IOException {
    Path ca = Files.writeString(dir.resolve("ca.pem"), "x");
    assertThat(load(KEYSTONE, Map.of("OS_CACERT", ca.toString())).caFile()).isEqualTo(ca);
  }

  // ------------------------------------------------------------------ clouds.yaml

  private static final String CLOUDS =
      """
      clouds:
        mine:
          auth:
            auth_url: https://keystone.example:5000/v3
            username: yaml-user
            password: yaml-pass
            project_name: k8s
            user_domain_name: Default
            project_domain_name: Default
          region_name: RegionOne
          interface: internal
          identity_api_version: 3
          verify: false
        appcred:
          auth_type: v3applicationcredential
          auth:
            auth_url: https://keystone.example:5000/v3
            application_credential_id: ac1
            application_credential_secret: acs
        broken:
          auth:
            auth_url: https://k/v3
            colour: blue
      """;

  private Map<String, String> cloudsEnv(String cloud) throws IOException {
    Path f = Files.writeString(dir.resolve("clouds.yaml"), CLOUDS);
    return Map.of("OS_CLOUD", cloud, "OS_CLIENT_CONFIG_FILE", f.toString());
  }

  @Test
  void cloudsYamlSelectedByOsCloud() throws IOException {
    CloudConfig c = load(null, cloudsEnv("mine"));
    assertThat(c.auth()).isEqualTo(AuthMethod.V3_PASSWORD);
    assertThat(user(c).name()).isEqualTo("yaml-user");
    assertThat(c.region()).isEqualTo("RegionOne");
    assertThat(c.endpointInterface()).isEqualTo("internal");
    assertThat(c.tlsInsecure()).isTrue();
    assertThat(c.sources().get(ConfigKey.USERNAME)).endsWith("clouds.mine.auth.username");
  }

  @Test
  void cloudsYamlApplicationCredential() throws IOException {
    assertThat(load(null, cloudsEnv("appcred")).auth())
        .isEqualTo(AuthMethod.V3_APPLICATION_CREDENTIAL);
  }

  @Test
  void envBeatsCloudsYamlAndCloudConfBeatsBoth() throws IOException {
    Map<String, String> env = new HashMap<>(cloudsEnv("mine"));
    env.put("OS_USERNAME", "env-user");
    env.put("OS_REGION_NAME", "EnvRegion");
    CloudConfig c = load("[Global]\nregion = FileRegion\n", env);
    assertThat(user(c).name()).isEqualTo("env-user");
    assertThat(c.region()).isEqualTo("FileRegion");
    assertThat(password(c).reveal()).isEqualTo("yaml-pass");
  }

  @Test
  void cloudsYamlUnknownKeyIsNamed() throws IOException {
    Map<String, String> env = cloudsEnv("broken");
    assertThatThrownBy(() -> load(null, env))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("unknown key")
        .hasMessageContaining("clouds.broken.auth.colour");
  }

  /**
   * A clouds.yaml that cannot be read as meant is refused, saying where, and the error never
   * carries the file's text: YAML errors quote the line they stop at, which may hold a password.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "not YAML | 'clouds:\n  c:\n    auth: {password: s3cret-pass, [' | is not valid YAML",
        "a key given twice: which was meant is not guessed | 'clouds:\n  c:\n    auth:\n      password: s3cret-pass\n      password: s3cret-pass2' | duplicate key password",
        "a tab where YAML wants spaces | 'clouds:\n  c:\n\tauth: {password: s3cret-pass}' | is not valid YAML",
        "no clouds map | 'password: s3cret-pass' | has no 'clouds:' map",
      })
  void aCloudsYamlThatCannotBeReadIsRefusedWithoutItsText(String name, String yaml, String said)
      throws IOException {
    Path f =
        Files.writeString(
            dir.resolve("clouds.yaml"), yaml.replace("\\n", "\n").replace("\\t", "\t"));
    assertThatThrownBy(() -> CloudConfigLoader.fromCloudsYaml(f, "c"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(f.toString())
        .hasMessageContaining(said)
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("s3cret"))
        .satisfies(e -> assertThat(String.valueOf(e.getCause())).doesNotContain("s3cret"));
  }

  @Test
  void cloudsYamlUnknownCloudListsTheKnownOnes() throws IOException {
    Map<String, String> env = cloudsEnv("nope");
    assertThatThrownBy(() -> load(null, env))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("OS_CLOUD=nope")
        .hasMessageContaining("mine");
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(ConfigKey.class)
  void everyKeyFromTheIniFile(ConfigKey k) throws IOException {
    Path f =
        Files.writeString(
            dir.resolve("one.conf"), "[" + k.section() + "]\n" + k.iniName() + " = v\n");
    Map<ConfigKey, Setting> m = CloudConfigLoader.fromIni(f);
    assertThat(m).containsOnlyKeys(k);
    assertThat(m.get(k).source()).endsWith("[" + k.section() + "] " + k.iniName());
  }

  static Stream<Arguments> envNames() {
    return Arrays.stream(ConfigKey.values())
        .flatMap(
            k ->
                Stream.concat(k.envName().stream(), k.envAliases().stream())
                    .map(n -> Arguments.of(n, k)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("envNames")
  void everyKeyFromItsEnvironmentVariable(String name, ConfigKey k) {
    Map<ConfigKey, Setting> m = CloudConfigLoader.fromEnv(Map.of(name, "v"));
    assertThat(m).containsOnlyKeys(k);
    assertThat(m.get(k).source()).isEqualTo("env " + name);
  }

  static Stream<Arguments> cloudsYamlPaths() {
    return Arrays.stream(ConfigKey.values())
        .filter(k -> k.cloudsYamlPath().isPresent())
        .map(k -> Arguments.of(k.cloudsYamlPath().get(), k));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cloudsYamlPaths")
  void everyKeyFromCloudsYaml(String path, ConfigKey k) throws IOException {
    String yaml =
        path.startsWith("auth.")
            ? "clouds:\n  c:\n    auth:\n      " + path.substring(5) + ": v\n"
            : "clouds:\n  c:\n    " + path + ": v\n";
    Path f = Files.writeString(dir.resolve("clouds.yaml"), yaml);
    Map<ConfigKey, Setting> m = CloudConfigLoader.fromCloudsYaml(f, "c");
    assertThat(m).containsOnlyKeys(k);
    assertThat(m.get(k).source()).endsWith("clouds.c." + path);
  }

  @Test
  void describeShowsEveryKeyWithItsSourceAndMasksSecrets() throws IOException {
    CloudConfig c =
        load(
            "[Global]\nauth-url = http://k/v3\nuser-id = u\npassword = hunter2\ntenant-id = t\n"
                + "user-domain-id = ud\nproject-domain-name = PD\nregion = R\n"
                + "[BlockStorage]\nrequest-timeout = 9\n",
            Map.of());
    assertThat(c.describe())
        .contains(
            "[Global] password = ***   (from " + dir.resolve("cloud.conf") + " [Global] password)",
            "[BlockStorage] request-timeout = 9s   (from "
                + dir.resolve("cloud.conf")
                + " [BlockStorage] request-timeout)")
        .noneMatch(l -> l.contains("hunter2"))
        .hasSize(8);
    assertThat(c.toString()).doesNotContain("hunter2");
  }

  private static Credentials.User user(CloudConfig c) {
    Credentials k = c.credentials();
    if (k instanceof Credentials.V2Password p) {
      return p.user();
    }
    if (k instanceof Credentials.V3Password p) {
      return p.user();
    }
    if (k instanceof Credentials.V3Trust t) {
      return t.user();
    }
    return ((Credentials.V3ApplicationCredential) k).user();
  }

  private static Credentials.Project project(CloudConfig c) {
    Credentials k = c.credentials();
    return k instanceof Credentials.V2Password p
        ? p.project()
        : ((Credentials.V3Password) k).project();
  }

  private static String projectId(CloudConfig c) {
    return c.credentials() instanceof Credentials.NoAuth n ? n.projectId() : project(c).id();
  }

  private static Secret password(CloudConfig c) {
    Credentials k = c.credentials();
    if (k instanceof Credentials.V2Password p) {
      return p.password();
    }
    if (k instanceof Credentials.V3Password p) {
      return p.password();
    }
    return ((Credentials.V3Trust) k).password();
  }
}
