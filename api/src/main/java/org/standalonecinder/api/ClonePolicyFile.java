package org.standalonecinder.api;

import java.util.Set;

/**
 * The admin's clone policy file, as both components read it: the webhook at every review (a file
 * its container mounts), the provisioner when it clones across namespaces (from the ConfigMap the
 * file comes from). Its keys are documented in docs/webhook.md.
 */
public final class ClonePolicyFile {

  /** The ConfigMap the policy lives in, in the install's namespace. */
  public static final String CONFIG_MAP = "standalone-cinder-webhook-policy";

  /** The ConfigMap's key holding the file. */
  public static final String KEY = "policy.yaml";

  /** Every key the policy may have; any other makes the whole policy invalid. */
  public static final Set<String> KEYS =
      Set.of(
          "mode",
          "crossNamespace",
          "exemptNamespaces",
          "smartcloneClasses",
          "undersizedClone",
          "cinderCheckUnavailable",
          "deputies",
          "trustedDeputies");

  private ClonePolicyFile() {}
}
