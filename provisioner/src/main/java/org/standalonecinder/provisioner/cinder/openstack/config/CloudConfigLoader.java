package org.standalonecinder.provisioner.cinder.openstack.config;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.commons.configuration2.INIConfiguration;
import org.apache.commons.configuration2.SubnodeConfiguration;
import org.apache.commons.configuration2.ex.ConfigurationException;
import org.standalonecinder.api.settings.YamlText;

/**
 * Reads the cloud configuration from its three sources and merges them key by key.
 *
 * <p>Precedence, highest first: the cloud.conf INI file, then {@code OS_*} environment variables,
 * then the clouds.yaml cloud named by {@code OS_CLOUD}. A key set in a higher source replaces the
 * same key from a lower one; nothing else is merged. Unknown INI sections and keys, unknown
 * clouds.yaml keys and two spellings of one key with different values in one source are errors that
 * name the key. What cloud-provider-openstack's cloud.conf holds for its other parts (its load
 * balancer, metadata, networking and route sections, and its node-side block storage keys) is
 * ignored and listed, so that the file an admin's OpenStack cloud provider already reads works
 * unchanged. Unknown {@code OS_*} variables are ignored: environments carry many meant for other
 * tools.
 */
public final class CloudConfigLoader {

  /** Where clouds.yaml is looked for when {@code OS_CLIENT_CONFIG_FILE} is not set. */
  static List<Path> cloudsYamlCandidates(Map<String, String> env) {
    List<Path> paths = new ArrayList<>();
    paths.add(Path.of("clouds.yaml"));
    String home = env.getOrDefault("HOME", System.getProperty("user.home"));
    if (home != null) {
      paths.add(Path.of(home, ".config", "openstack", "clouds.yaml"));
    }
    paths.add(Path.of("/etc/openstack/clouds.yaml"));
    return paths;
  }

  private CloudConfigLoader() {}

  /**
   * Loads and validates the configuration.
   *
   * @param cloudConf the INI file, or null for none
   * @param env the environment (a parameter so tests need not touch the real one)
   */
  public static CloudConfig load(Path cloudConf, Map<String, String> env) {
    Map<ConfigKey, Setting> merged = new EnumMap<>(ConfigKey.class);
    String cloud = nonEmpty(env.get("OS_CLOUD"));
    if (cloud != null) {
      merged.putAll(fromCloudsYaml(findCloudsYaml(env), cloud));
    }
    merged.putAll(fromEnv(env));
    List<String> ignored = new ArrayList<>();
    if (cloudConf != null) {
      merged.putAll(fromIni(cloudConf, ignored));
    }
    return CloudConfig.from(merged, ignored);
  }

  /** cloud-provider-openstack's sections for its other parts: read by it, never by this project. */
  static final Set<String> OTHER_SECTIONS =
      Set.of("loadbalancer", "metadata", "networking", "route");

  /**
   * cloud-provider-openstack's {@code [BlockStorage]} keys for what its node plugin does (device
   * paths, attach limits, rescans): this project attaches nothing to nodes.
   */
  static final Set<String> NODE_BLOCK_STORAGE_KEYS =
      Set.of(
          "trust-device-path",
          "node-volume-attach-limit",
          "rescan-on-resize",
          "ignore-volume-microversion");

  /** The {@code OS_*} variables this project knows. */
  static Map<ConfigKey, Setting> fromEnv(Map<String, String> env) {
    Map<ConfigKey, Setting> out = new EnumMap<>(ConfigKey.class);
    for (ConfigKey key : ConfigKey.values()) {
      List<String> names = new ArrayList<>();
      key.envName().ifPresent(names::add);
      names.addAll(key.envAliases());
      for (String name : names) {
        String v = nonEmpty(env.get(name));
        if (v != null) {
          put(out, key, new Setting(v, "env " + name));
        }
      }
    }
    return out;
  }

  /** A cloud.conf in the Go provisioner's INI format ({@code [Global]}, {@code [BlockStorage]}). */
  static Map<ConfigKey, Setting> fromIni(Path file) {
    return fromIni(file, new ArrayList<>());
  }

  /**
   * A cloud.conf in the Go provisioner's or cloud-provider-openstack's INI format.
   *
   * @param ignored receives one line for each section or key read by cloud-provider-openstack only
   */
  static Map<ConfigKey, Setting> fromIni(Path file, List<String> ignored) {
    INIConfiguration ini = new INIConfiguration();
    try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      ini.read(r);
    } catch (IOException e) {
      throw new ConfigException("cannot read cloud config " + file + ": " + e.getMessage(), e);
    } catch (ConfigurationException e) {
      throw new ConfigException("cloud config " + file + " is not valid INI: " + e.getMessage(), e);
    }
    Map<ConfigKey, Setting> out = new EnumMap<>(ConfigKey.class);
    for (String section : ini.getSections()) {
      if (section == null) {
        if (!ini.getSection(null).isEmpty()) {
          throw new ConfigException(
              file + ": settings before the first section; put them under [Global]");
        }
        continue;
      }
      SubnodeConfiguration sub = ini.getSection(section);
      if (OTHER_SECTIONS.contains(section.toLowerCase(Locale.ROOT))) {
        ignored.add(
            "["
                + section
                + "] ("
                + count(sub)
                + " key(s)) in "
                + file
                + ": cloud-provider-openstack's, not read here");
        continue;
      }
      if (!section.equalsIgnoreCase("Global") && !section.equalsIgnoreCase("BlockStorage")) {
        throw new ConfigException(
            file
                + ": unknown section ["
                + section
                + "]; known: [Global], [BlockStorage] (and cloud-provider-openstack's"
                + " [LoadBalancer], [Metadata], [Networking], [Route], which are ignored)");
      }
      readSection(file, section, sub, out, ignored);
    }
    return out;
  }

  /** The keys of a [Global] or [BlockStorage] section, each known or refused with a suggestion. */
  private static void readSection(
      Path file,
      String section,
      SubnodeConfiguration sub,
      Map<ConfigKey, Setting> out,
      List<String> ignored) {
    for (Iterator<String> it = sub.getKeys(); it.hasNext(); ) {
      String name = it.next();
      if (section.equalsIgnoreCase("BlockStorage")
          && NODE_BLOCK_STORAGE_KEYS.contains(name.trim().toLowerCase(Locale.ROOT))) {
        ignored.add(
            "["
                + section
                + "] "
                + name
                + " in "
                + file
                + ": cloud-provider-openstack's node setting, not read here");
        continue;
      }
      ConfigKey key =
          ConfigKey.fromIni(section, name)
              .orElseThrow(
                  () ->
                      new ConfigException(
                          file
                              + ": unknown key '"
                              + name
                              + "' in ["
                              + section
                              + "]"
                              + suggestion(section, name)));
      String v = nonEmpty(sub.getString(name));
      if (v != null) {
        put(out, key, new Setting(v, file + " [" + section + "] " + name));
      }
    }
  }

  private static final Set<String> CLOUD_KEYS_WITHOUT_EFFECT =
      // Written by Horizon and openstacksdk into every clouds.yaml; the auth URL decides the
      // identity version and the other two describe other services.
      Set.of("identity_api_version", "auth_type", "profile");

  /** One cloud of a clouds.yaml file. */
  @SuppressWarnings("unchecked")
  static Map<ConfigKey, Setting> fromCloudsYaml(Path file, String cloud) {
    Object root;
    try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      root = YamlText.load(r);
    } catch (IOException | UncheckedIOException e) {
      throw new ConfigException("cannot read " + file + ": " + e.getMessage(), e);
    } catch (YamlText.InvalidYamlException e) {
      throw new ConfigException(file + " is not valid YAML: " + e.getMessage(), e);
    }
    if (!(root instanceof Map<?, ?> top) || !(top.get("clouds") instanceof Map<?, ?> clouds)) {
      throw new ConfigException(file + " has no 'clouds:' map");
    }
    if (!(clouds.get(cloud) instanceof Map<?, ?> entry)) {
      throw new ConfigException(
          "OS_CLOUD=" + cloud + " but " + file + " has no such cloud; it has " + clouds.keySet());
    }
    Map<ConfigKey, Setting> out = new EnumMap<>(ConfigKey.class);
    String where = file + " clouds." + cloud + ".";
    for (Map.Entry<?, ?> e : ((Map<Object, Object>) entry).entrySet()) {
      String name = String.valueOf(e.getKey());
      if (name.equals("auth")) {
        if (!(e.getValue() instanceof Map<?, ?> auth)) {
          throw new ConfigException(where + "auth must be a map");
        }
        for (Map.Entry<?, ?> a : auth.entrySet()) {
          String an = "auth." + a.getKey();
          ConfigKey key = cloudsKey(an, where);
          put(out, key, new Setting(scalar(a.getValue(), where + an), where + an));
        }
      } else if (name.equals("verify")) {
        String v = scalar(e.getValue(), where + name);
        put(
            out,
            ConfigKey.TLS_INSECURE,
            new Setting(String.valueOf(!Boolean.parseBoolean(v)), where + name));
      } else if (!CLOUD_KEYS_WITHOUT_EFFECT.contains(name)) {
        ConfigKey key = cloudsKey(name, where);
        put(out, key, new Setting(scalar(e.getValue(), where + name), where + name));
      }
    }
    return out;
  }

  private static ConfigKey cloudsKey(String path, String where) {
    for (ConfigKey k : ConfigKey.values()) {
      if (k.cloudsYamlPath().map(path::equals).orElse(false)) {
        return k;
      }
    }
    throw new ConfigException("unknown key " + where + path);
  }

  private static String scalar(Object v, String where) {
    if (v == null || v instanceof Map || v instanceof List) {
      throw new ConfigException(where + " must be a single value");
    }
    return v.toString();
  }

  static Path findCloudsYaml(Map<String, String> env) {
    String explicit = nonEmpty(env.get("OS_CLIENT_CONFIG_FILE"));
    if (explicit != null) {
      Path p = Path.of(explicit);
      if (!Files.isRegularFile(p)) {
        throw new ConfigException("OS_CLIENT_CONFIG_FILE=" + explicit + " does not exist");
      }
      return p;
    }
    for (Path p : cloudsYamlCandidates(env)) {
      if (Files.isRegularFile(p)) {
        return p;
      }
    }
    throw new ConfigException(
        "OS_CLOUD is set but no clouds.yaml was found in " + cloudsYamlCandidates(env));
  }

  private static void put(Map<ConfigKey, Setting> out, ConfigKey key, Setting s) {
    Setting before = out.get(key);
    if (before != null && !before.value().equals(s.value())) {
      throw new ConfigException(
          "contradiction: "
              + before.source()
              + " and "
              + s.source()
              + " both set "
              + key.display()
              + " to different values; keep one");
    }
    out.put(key, s);
  }

  private static int count(SubnodeConfiguration sub) {
    int n = 0;
    for (Iterator<String> it = sub.getKeys(); it.hasNext(); it.next()) {
      n++;
    }
    return n;
  }

  private static String suggestion(String section, String name) {
    String n = name.toLowerCase(Locale.ROOT).replace('_', '-');
    for (ConfigKey k : ConfigKey.values()) {
      if (k.iniName().equals(n)) {
        return k.section().equalsIgnoreCase(section)
            ? "; did you mean '" + k.iniName() + "'?"
            : "; '" + k.iniName() + "' belongs in [" + k.section() + "]";
      }
    }
    return "";
  }

  private static String nonEmpty(String s) {
    return s == null || s.isBlank() ? null : s.trim();
  }
}
