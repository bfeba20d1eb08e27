package org.standalonecinder.webhook.policy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.standalonecinder.api.settings.YamlText;
import org.standalonecinder.webhook.policy.CinderCheckRule.CheckUnavailable;
import org.standalonecinder.webhook.policy.CloneSizeRule.Undersized;
import org.standalonecinder.webhook.policy.CrossNamespaceRule.CrossNamespace;

/**
 * The admin's policy file (a ConfigMap in a cluster), typed. Every key is optional; with no file at
 * all the defaults are the safe ones: enforce, cross-namespace clones only for authorized
 * requesters, no exempt namespaces, any of our classes may enable smartclone. Unknown keys and bad
 * values are errors that name them.
 *
 * <pre>
 * mode: enforce                 # enforce | audit (audit: warn and count, never deny)
 * crossNamespace: authorized    # authorized | deny | allow
 * exemptNamespaces:             # a label selector for namespaces the rules leave alone
 *   matchLabels: {policy.standalone-cinder.io/exempt: "true"}
 *   matchExpressions: [{key: tier, operator: In, values: [sandbox]}]
 * smartcloneClasses: [fast]     # if set, only these classes may have smartclone: "true"
 * undersizedClone: deny         # deny | raise (raise the request to the source's size, warn)
 * cinderCheckUnavailable: deny  # deny | allow (admit unchecked, with a warning)
 * deputies: [group:ci-bots]     # more requesters that create claims for others (users, group:X)
 * trustedDeputies: [system:serviceaccount:backup:velero]  # deputies whose own rights count
 * </pre>
 *
 * @param enforce false for audit mode
 * @param crossNamespace who may clone across namespaces
 * @param exemptNamespaces namespaces (by their labels) the rules do not apply to
 * @param smartcloneClasses classes allowed to enable smartclone; empty for any
 * @param undersizedClone what to do with a clone that requests less than its source holds
 * @param cinderCheckUnavailable what to do when the resolver cannot be asked
 * @param requesters which requesters act for others ({@link Requesters})
 */
public record PolicyConfig(
    boolean enforce,
    CrossNamespace crossNamespace,
    LabelSelector exemptNamespaces,
    Set<String> smartcloneClasses,
    Undersized undersizedClone,
    CheckUnavailable cinderCheckUnavailable,
    Requesters requesters) {

  public PolicyConfig {
    requesters = requesters == null ? Requesters.DEFAULT : requesters;
  }

  public PolicyConfig(
      boolean enforce,
      CrossNamespace crossNamespace,
      LabelSelector exemptNamespaces,
      Set<String> smartcloneClasses,
      Undersized undersizedClone,
      CheckUnavailable cinderCheckUnavailable) {
    this(
        enforce,
        crossNamespace,
        exemptNamespaces,
        smartcloneClasses,
        undersizedClone,
        cinderCheckUnavailable,
        Requesters.DEFAULT);
  }

  public static final PolicyConfig DEFAULTS =
      new PolicyConfig(
          true,
          CrossNamespace.AUTHORIZED,
          LabelSelector.NOTHING,
          Set.of(),
          Undersized.DENY,
          CheckUnavailable.DENY);

  private static final Set<String> KEYS = org.standalonecinder.api.ClonePolicyFile.KEYS;

  /** Parses the YAML text; empty text gives {@link #DEFAULTS}. */
  @SuppressWarnings("unchecked")
  public static PolicyConfig parse(String yaml) {
    Object root;
    try {
      root = YamlText.load(yaml);
    } catch (YamlText.InvalidYamlException e) {
      throw new IllegalArgumentException("the policy is not valid YAML: " + e.getMessage(), e);
    }
    if (root == null) {
      return DEFAULTS;
    }
    if (!(root instanceof Map<?, ?> map)) {
      throw new IllegalArgumentException("the policy must be a map of settings");
    }
    List<String> problems = new ArrayList<>();
    for (Object k : map.keySet()) {
      if (!KEYS.contains(String.valueOf(k))) {
        problems.add("unknown key '" + k + "' (known: " + KEYS.stream().sorted().toList() + ")");
      }
    }
    boolean enforce = true;
    Object mode = map.get("mode");
    if (mode != null) {
      switch (String.valueOf(mode)) {
        case "enforce" -> enforce = true;
        case "audit" -> enforce = false;
        default -> problems.add("mode '" + mode + "' must be enforce or audit");
      }
    }
    CrossNamespace cross = CrossNamespace.AUTHORIZED;
    Object cn = map.get("crossNamespace");
    if (cn != null) {
      switch (String.valueOf(cn)) {
        case "authorized" -> cross = CrossNamespace.AUTHORIZED;
        case "deny" -> cross = CrossNamespace.DENY;
        case "allow" -> cross = CrossNamespace.ALLOW;
        default -> problems.add("crossNamespace '" + cn + "' must be authorized, deny or allow");
      }
    }
    LabelSelector exempt = LabelSelector.NOTHING;
    Object ex = map.get("exemptNamespaces");
    if (ex != null) {
      try {
        exempt = LabelSelector.parse(ex);
      } catch (IllegalArgumentException e) {
        problems.add("exemptNamespaces: " + e.getMessage());
      }
    }
    Set<String> classes = Set.of();
    Object sc = map.get("smartcloneClasses");
    if (sc != null) {
      if (sc instanceof List<?> l && l.stream().allMatch(x -> x instanceof String)) {
        classes = Set.copyOf((List<String>) l);
      } else {
        problems.add("smartcloneClasses must be a list of StorageClass names");
      }
    }
    Undersized undersized = Undersized.DENY;
    Object us = map.get("undersizedClone");
    if (us != null) {
      switch (String.valueOf(us)) {
        case "deny" -> undersized = Undersized.DENY;
        case "raise" -> undersized = Undersized.RAISE;
        default -> problems.add("undersizedClone '" + us + "' must be deny or raise");
      }
    }
    CheckUnavailable unavailable = CheckUnavailable.DENY;
    Object cu = map.get("cinderCheckUnavailable");
    if (cu != null) {
      switch (String.valueOf(cu)) {
        case "deny" -> unavailable = CheckUnavailable.DENY;
        case "allow" -> unavailable = CheckUnavailable.ALLOW;
        default -> problems.add("cinderCheckUnavailable '" + cu + "' must be deny or allow");
      }
    }
    Set<String> deputies = names(map, "deputies", problems);
    Set<String> trusted = names(map, "trustedDeputies", problems);
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException("policy: " + String.join("; ", problems));
    }
    return new PolicyConfig(
        enforce,
        cross,
        exempt,
        classes,
        undersized,
        unavailable,
        new Requesters(deputies, trusted));
  }

  /** A list of user names and {@code group:<name>} entries. */
  private static Set<String> names(Map<?, ?> map, String key, List<String> problems) {
    Object v = map.get(key);
    if (v == null) {
      return Set.of();
    }
    if (v instanceof List<?> l
        && l.stream().allMatch(x -> x instanceof String s && !s.isBlank() && !s.equals("group:"))) {
      return l.stream().map(String.class::cast).collect(java.util.stream.Collectors.toSet());
    }
    problems.add(key + " must be a list of user names and group:<name> entries");
    return Set.of();
  }
}
