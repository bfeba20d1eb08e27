package org.standalonecinder.webhook.policy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.flipkart.zjsonpatch.JsonDiff;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.standalonecinder.api.ClassParameters;
import org.standalonecinder.api.InvalidClassParametersException;
import org.standalonecinder.webhook.admission.AdmissionController;
import org.standalonecinder.webhook.admission.Decision;
import org.standalonecinder.webhook.admission.ReviewRequest;

/**
 * StorageClasses of our provisioner: every parameter problem is a denial that lists them all (with
 * a suggestion for a misspelt key), and the mutating endpoint normalises {@code smartclone} to its
 * documented spelling and {@code "true"}/{@code "false"}, so that nobody is misled by {@code
 * smartClone: "TRUE"} looking unlike what the provisioner reads; an empty {@code smartclone} (the
 * Go standalone-cinder's form) is stored as {@code "true"}, with a warning that says why. Other
 * provisioners' classes pass untouched.
 */
public final class StorageClassPolicy implements AdmissionController {

  /** Rule names (metrics, docs). */
  public static final String RULE_PARAMETERS = "storageclass-parameters";

  public static final String RULE_SMARTCLONE_CLASSES = "storageclass-smartclone-classes";
  public static final String RULE_NORMALISE = "storageclass-normalise";

  /**
   * A class of in-tree rbd volumes that allows expansion: the provisioner makes no claim of it
   * (Kubernetes' own expand controller takes in-tree rbd claims too, and on 1.20 crashed the
   * controller-manager), and an admin who allows expansion on such a class later opens that path.
   */
  public static final String RULE_RBD_EXPANSION = "storageclass-rbd-expansion";

  /**
   * Why an empty smartclone becomes "true": users coming from the Go standalone-cinder, where the
   * key's presence enabled cloning, keep their classes' meaning and learn the spelling stored.
   */
  static final String LEGACY_EMPTY =
      " (an empty smartclone enabled cloning in the Go standalone-cinder and does here too;"
          + " write \"true\", or remove the key to disable cloning)";

  private static final ObjectMapper JSON = new ObjectMapper();

  private final String provisionerName;
  private final java.util.Set<String> smartcloneClasses;

  /** Any of our classes may enable smartclone. */
  public StorageClassPolicy(String provisionerName) {
    this(provisionerName, java.util.Set.of());
  }

  /**
   * @param smartcloneClasses the only classes that may enable smartclone; empty for any
   */
  public StorageClassPolicy(String provisionerName, java.util.Set<String> smartcloneClasses) {
    this.provisionerName = provisionerName;
    this.smartcloneClasses = java.util.Set.copyOf(smartcloneClasses);
  }

  @Override
  public Decision review(ReviewRequest request, boolean mutating) {
    if ("DELETE".equals(request.operation()) || request.object() == null) {
      return Decision.allow();
    }
    JsonNode object = JSON.valueToTree(request.object());
    if (!provisionerName.equals(object.path("provisioner").asText(null))) {
      return Decision.allow();
    }
    Map<String, String> params = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = object.path("parameters").fields();
        it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      params.put(e.getKey(), e.getValue().asText());
    }
    ClassParameters parsed;
    try {
      parsed = ClassParameters.parse(params);
    } catch (InvalidClassParametersException e) {
      return Decision.deny(
          400,
          RULE_PARAMETERS,
          "StorageClass "
              + object.path("metadata").path("name").asText()
              + " of "
              + provisionerName
              + ": "
              + String.join("; ", e.problems())
              + " (known parameters: "
              + ClassParameters.KEYS
              + ")");
    }
    String name = object.path("metadata").path("name").asText();
    if (parsed.smartclone() && !smartcloneClasses.isEmpty() && !smartcloneClasses.contains(name)) {
      return Decision.deny(
          403,
          RULE_SMARTCLONE_CLASSES,
          "StorageClass "
              + name
              + " may not enable smartclone: the cluster's policy allows it only for "
              + smartcloneClasses.stream().sorted().toList());
    }
    if ("rbd".equalsIgnoreCase(parsed.rbdForm())
        && object.path("allowVolumeExpansion").asBoolean(false)) {
      return Decision.deny(
          400,
          RULE_RBD_EXPANSION,
          "StorageClass "
              + name
              + " asks for in-tree rbd volumes (rbdForm: rbd) and allows volume expansion: users"
              + " could then grow its claims, which Kubernetes' own expand controller takes too"
              + " (on Kubernetes 1.20 that can crash the controller-manager), so the provisioner"
              + " makes no claim of such a class; remove allowVolumeExpansion, or use rbdForm: csi");
    }
    if (!mutating) {
      return Decision.allow();
    }
    ObjectNode normalised = object.deepCopy();
    java.util.List<String> warnings = new java.util.ArrayList<>();
    if (normalised.get("parameters") instanceof ObjectNode p) {
      for (Map.Entry<String, String> e : params.entrySet()) {
        String normal = Boolean.toString(parsed.smartclone());
        if (e.getKey().toLowerCase(Locale.ROOT).equals("smartclone")) {
          p.remove(e.getKey());
          p.put("smartclone", normal);
          if (!e.getKey().equals("smartclone") || !e.getValue().equals(normal)) {
            // Tell the admin, so that their manifest can say what the cluster stores.
            warnings.add(
                "parameter "
                    + e.getKey()
                    + ": \""
                    + e.getValue()
                    + "\" is stored as smartclone: \""
                    + normal
                    + "\""
                    + (e.getValue().isBlank() ? LEGACY_EMPTY : ""));
          }
        }
      }
    }
    JsonNode patch = JsonDiff.asJson(object, normalised);
    return patch.isEmpty()
        ? Decision.allow()
        : Decision.allow(warnings, patch.toString(), java.util.List.of(RULE_NORMALISE));
  }
}
