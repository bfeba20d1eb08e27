package org.standalonecinder.provisioner.cinder.openstack.config;

import java.util.regex.Pattern;
import org.standalonecinder.provisioner.cinder.openstack.config.CloudConfig.AuthMethod;

/**
 * Who the provisioner is to Cinder: one variant per way of authenticating, each holding only what
 * that way needs and each checking only its own keys (a key of another way is an error that says
 * why, never silently ignored). Secrets are {@link Secret}s.
 */
public sealed interface Credentials {

  /** The method, for the log and {@code cinder check}. */
  AuthMethod method();

  /**
   * What the start-up log shows for {@code key}, or null when this variant has no such value. Never
   * a secret.
   */
  String shown(ConfigKey key);

  /**
   * A Keystone user: its id, or its name in a domain.
   *
   * @param id the user's id, or null
   * @param name the user's name, or null
   * @param domainId the name's domain id
   * @param domainName the name's domain name
   */
  record User(String id, String name, String domainId, String domainName) {
    static User read(SettingsReader r, Domains d) {
      return new User(
          r.get(ConfigKey.USER_ID), r.get(ConfigKey.USERNAME), d.userId(), d.userName());
    }

    /** "user 'name'" or "user id ...": for messages. */
    public String describe() {
      return name != null ? "user '" + name + "'" : "user id " + id;
    }

    String shown(ConfigKey key) {
      return switch (key) {
        case USERNAME -> name;
        case USER_ID -> id;
        case DOMAIN_ID, USER_DOMAIN_ID -> domainId;
        case DOMAIN_NAME, USER_DOMAIN_NAME -> domainName;
        default -> null;
      };
    }
  }

  /**
   * A Keystone project (tenant): its id, or its name in a domain.
   *
   * @param id the project's id, or null
   * @param name the project's name, or null
   * @param domainId the name's domain id
   * @param domainName the name's domain name
   */
  record Project(String id, String name, String domainId, String domainName) {
    /** "abc" or "'name' in domain d": for messages. */
    public String describe() {
      return id != null
          ? id
          : "'" + name + "' in domain " + (domainId != null ? domainId : domainName);
    }

    String shown(ConfigKey key) {
      return switch (key) {
        case TENANT_ID -> id;
        case TENANT_NAME -> name;
        case PROJECT_DOMAIN_ID -> domainId;
        case PROJECT_DOMAIN_NAME -> domainName;
        default -> null;
      };
    }
  }

  /**
   * Cinder's noauth middleware: {@code X-Auth-Token: user:project}, no Keystone.
   *
   * @param user the user before the colon
   * @param projectId the project Cinder files the volumes under
   */
  record NoAuth(String user, String projectId) implements Credentials {

    /** The user noauth sends when none is configured. */
    public static final String DEFAULT_USER = "standalone-cinder";

    // Cinder's project_id_regex: a noauth project outside it makes every URL a 404.
    private static final Pattern CINDER_PROJECT_ID = Pattern.compile("[0-9a-f-]+");

    static NoAuth read(SettingsReader r) {
      r.forbid(
          "noauth (cinder-endpoint) talks to Cinder without Keystone",
          ConfigKey.PASSWORD,
          ConfigKey.TRUST_ID,
          ConfigKey.APPLICATION_CREDENTIAL_ID,
          ConfigKey.APPLICATION_CREDENTIAL_NAME,
          ConfigKey.APPLICATION_CREDENTIAL_SECRET);
      String projectId = r.get(ConfigKey.TENANT_ID);
      if (projectId == null) {
        throw r.missing(
            ConfigKey.TENANT_ID, "noauth needs the project id that Cinder files the volumes under");
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
      String user = r.get(ConfigKey.USER_ID);
      user = user != null ? user : r.get(ConfigKey.USERNAME);
      return new NoAuth(user != null ? user : DEFAULT_USER, projectId);
    }

    @Override
    public AuthMethod method() {
      return AuthMethod.NOAUTH;
    }

    @Override
    public String shown(ConfigKey key) {
      return switch (key) {
        case TENANT_ID -> projectId;
        case USERNAME, USER_ID -> user;
        default -> null;
      };
    }
  }

  /**
   * Keystone v2.0 password (legacy clouds).
   *
   * @param user the user (v2.0 has no domains)
   * @param password its password
   * @param project the tenant, by id or name
   */
  record V2Password(User user, Secret password, Project project) implements Credentials {
    static V2Password read(SettingsReader r) {
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
      Project project =
          new Project(r.get(ConfigKey.TENANT_ID), r.get(ConfigKey.TENANT_NAME), null, null);
      if (project.id() == null && project.name() == null) {
        throw r.missing(ConfigKey.TENANT_ID, "set tenant-id or tenant-name");
      }
      return new V2Password(
          User.read(r, Domains.NONE), Secret.of(r.get(ConfigKey.PASSWORD)), project);
    }

    @Override
    public AuthMethod method() {
      return AuthMethod.V2_PASSWORD;
    }

    @Override
    public String shown(ConfigKey key) {
      return Credentials.shown(user, project, key);
    }
  }

  /**
   * Keystone v3 password, scoped to a project.
   *
   * @param user the user
   * @param password its password
   * @param project the project the token is scoped to
   */
  record V3Password(User user, Secret password, Project project) implements Credentials {
    static V3Password read(SettingsReader r, Domains d) {
      r.requireUser();
      r.require(ConfigKey.PASSWORD, "password authentication needs a password");
      String id = r.get(ConfigKey.TENANT_ID);
      String name = r.get(ConfigKey.TENANT_NAME);
      if (id == null && name == null) {
        throw r.missing(
            ConfigKey.TENANT_ID, "set tenant-id or tenant-name: the token must be project-scoped");
      }
      d = d.withDefaults(name != null);
      return new V3Password(
          User.read(r, d),
          Secret.of(r.get(ConfigKey.PASSWORD)),
          new Project(id, name, d.projectId(), d.projectName()));
    }

    @Override
    public AuthMethod method() {
      return AuthMethod.V3_PASSWORD;
    }

    @Override
    public String shown(ConfigKey key) {
      return Credentials.shown(user, project, key);
    }
  }

  /**
   * Keystone v3 password of the trustee, scoped to a trust.
   *
   * @param user the trustee
   * @param password its password
   * @param trustId the trust, which carries its own project scope
   */
  record V3Trust(User user, Secret password, String trustId) implements Credentials {
    static V3Trust read(SettingsReader r, Domains d) {
      r.forbid(
          "a trust carries its own project scope",
          ConfigKey.TENANT_ID,
          ConfigKey.TENANT_NAME,
          ConfigKey.APPLICATION_CREDENTIAL_ID,
          ConfigKey.APPLICATION_CREDENTIAL_NAME,
          ConfigKey.APPLICATION_CREDENTIAL_SECRET);
      r.requireUser();
      r.require(ConfigKey.PASSWORD, "the trustee authenticates with a password");
      return new V3Trust(
          User.read(r, d.withDefaults(false)),
          Secret.of(r.get(ConfigKey.PASSWORD)),
          r.get(ConfigKey.TRUST_ID));
    }

    @Override
    public AuthMethod method() {
      return AuthMethod.V3_TRUST;
    }

    @Override
    public String shown(ConfigKey key) {
      return key == ConfigKey.TRUST_ID ? trustId : user.shown(key);
    }
  }

  /**
   * Keystone v3 application credential (already scoped).
   *
   * @param id the credential's id, or null
   * @param name its name, or null (then {@code user} owns it)
   * @param user the owner, when the credential is named rather than given by id
   * @param secret the credential's secret
   */
  record V3ApplicationCredential(String id, String name, User user, Secret secret)
      implements Credentials {
    static V3ApplicationCredential read(SettingsReader r, Domains d) {
      r.forbid(
          "an application credential is already scoped and replaces the password",
          ConfigKey.PASSWORD,
          ConfigKey.TENANT_ID,
          ConfigKey.TENANT_NAME,
          ConfigKey.TRUST_ID);
      r.require(
          ConfigKey.APPLICATION_CREDENTIAL_SECRET, "an application credential needs its secret");
      String id = r.get(ConfigKey.APPLICATION_CREDENTIAL_ID);
      if (id == null) {
        r.requireUser();
      }
      return new V3ApplicationCredential(
          id,
          r.get(ConfigKey.APPLICATION_CREDENTIAL_NAME),
          User.read(r, d),
          Secret.of(r.get(ConfigKey.APPLICATION_CREDENTIAL_SECRET)));
    }

    @Override
    public AuthMethod method() {
      return AuthMethod.V3_APPLICATION_CREDENTIAL;
    }

    @Override
    public String shown(ConfigKey key) {
      return switch (key) {
        case APPLICATION_CREDENTIAL_ID -> id;
        case APPLICATION_CREDENTIAL_NAME -> name;
        default -> user.shown(key);
      };
    }
  }

  /** What the log shows of a user and a project for {@code key}. */
  private static String shown(User user, Project project, ConfigKey key) {
    String u = user.shown(key);
    return u != null ? u : project.shown(key);
  }

  /** The variant the settings select, read and checked. */
  static Credentials read(SettingsReader r, AuthMethod method) {
    Domains d = Domains.read(r);
    return switch (method) {
      case NOAUTH -> NoAuth.read(r);
      case V2_PASSWORD -> V2Password.read(r);
      case V3_PASSWORD -> V3Password.read(r, d);
      case V3_TRUST -> V3Trust.read(r, d);
      case V3_APPLICATION_CREDENTIAL -> V3ApplicationCredential.read(r, d);
    };
  }

  /**
   * The domains of the user and the project: their own keys, else the shared {@code domain-id} /
   * {@code domain-name}.
   */
  record Domains(String userId, String userName, String projectId, String projectName) {
    static final Domains NONE = new Domains(null, null, null, null);

    static Domains read(SettingsReader r) {
      String id = r.get(ConfigKey.DOMAIN_ID);
      String name = r.get(ConfigKey.DOMAIN_NAME);
      return new Domains(
          first(r.get(ConfigKey.USER_DOMAIN_ID), id),
          first(r.get(ConfigKey.USER_DOMAIN_NAME), name),
          first(r.get(ConfigKey.PROJECT_DOMAIN_ID), id),
          first(r.get(ConfigKey.PROJECT_DOMAIN_NAME), name));
    }

    /**
     * Keystone cannot find a user or project by name without its domain; "default" is the domain
     * every Keystone has, the one the OpenStack clients fall back to.
     */
    Domains withDefaults(boolean projectByName) {
      return new Domains(
          userId == null && userName == null ? "default" : userId,
          userName,
          projectByName && projectId == null && projectName == null ? "default" : projectId,
          projectName);
    }

    private static String first(String a, String b) {
      return a != null ? a : b;
    }
  }
}
