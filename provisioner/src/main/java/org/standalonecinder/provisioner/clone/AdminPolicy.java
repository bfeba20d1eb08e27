package org.standalonecinder.provisioner.clone;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.standalonecinder.api.ClonePolicyFile;
import org.standalonecinder.api.settings.YamlText;

/**
 * What the provisioner reads of the admin's clone policy (the webhook's policy file, from its
 * ConfigMap) when it is about to clone across namespaces: whether the policy is enforced and who
 * may clone across namespaces. The webhook judged a clone under the policy of its admission; a
 * WaitForFirstConsumer clone is made later, and by then the admin may have tightened it.
 *
 * @param enforce false in audit mode, where the webhook denies nothing
 * @param crossNamespace {@code authorized}, {@code deny} or {@code allow}
 * @param exemptions whether the policy exempts namespaces from its rules
 */
record AdminPolicy(boolean enforce, String crossNamespace, boolean exemptions) {

  /** No policy written: the webhook's defaults. */
  static final AdminPolicy DEFAULTS = new AdminPolicy(true, "authorized", false);

  /**
   * Whether no clone across namespaces may be made at all, grant or token. Not where the policy
   * exempts namespaces: the webhook lets their clones through, and which namespaces they are is
   * told by labels the provisioner does not read.
   */
  boolean forbidsAll() {
    return enforce && "deny".equals(crossNamespace) && !exemptions;
  }

  /** Whether every clone across namespaces is allowed (a token given on the policy holds). */
  boolean allowsAll() {
    return "allow".equals(crossNamespace);
  }

  /**
   * The policy of {@code text}; the defaults when there is none.
   *
   * @throws IllegalArgumentException saying what is wrong with it: what the webhook refuses of a
   *     policy as a whole (it then keeps its last good policy, which the provisioner cannot know),
   *     but for the contents of a label selector or a list of names
   */
  static AdminPolicy of(Optional<String> text) {
    Object root = text.map(YamlText::load).orElse(null);
    if (root == null) {
      return DEFAULTS;
    }
    if (!(root instanceof Map<?, ?> map)) {
      throw new IllegalArgumentException("the policy must be a map of settings");
    }
    for (Object k : map.keySet()) {
      if (!ClonePolicyFile.KEYS.contains(String.valueOf(k))) {
        throw new IllegalArgumentException("unknown key '" + k + "'");
      }
    }
    String mode = oneOf(map, "mode", "enforce", "audit");
    String cross = oneOf(map, "crossNamespace", "authorized", "deny", "allow");
    oneOf(map, "undersizedClone", "deny", "raise");
    oneOf(map, "cinderCheckUnavailable", "deny", "allow");
    for (String list : List.of("smartcloneClasses", "deputies", "trustedDeputies")) {
      if (map.get(list) != null && !(map.get(list) instanceof List<?>)) {
        throw new IllegalArgumentException(list + " must be a list");
      }
    }
    Object exempt = map.get("exemptNamespaces");
    if (exempt != null && !(exempt instanceof Map<?, ?>)) {
      throw new IllegalArgumentException("exemptNamespaces must be a label selector");
    }
    return new AdminPolicy(
        !"audit".equals(mode), cross == null ? DEFAULTS.crossNamespace() : cross, exempt != null);
  }

  /** The key's value, one of {@code values}, or null when it is not set. */
  private static String oneOf(Map<?, ?> map, String key, String... values) {
    Object v = map.get(key);
    if (v == null) {
      return null;
    }
    if (!List.of(values).contains(v)) {
      throw new IllegalArgumentException(key + " '" + v + "' must be " + String.join(", ", values));
    }
    return (String) v;
  }
}
