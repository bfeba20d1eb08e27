package org.standalonecinder.api;

import java.util.List;
import java.util.Map;

/**
 * The ecosystem's consent to a reference across namespaces, read for clones: a Gateway API {@code
 * ReferenceGrant} ({@code gateway.networking.k8s.io/v1beta1}) in the source's namespace, made by
 * whoever may write there, lets claims of the namespaces it lists in {@code from} use the claims it
 * lists in {@code to} (all of them when {@code to} names none) as a data source. It is what
 * Kubernetes' cross-namespace data sources ({@code dataSourceRef.namespace}) rest on; the project
 * accepts it beside the source's own {@link ClaimAnnotations#CLONE_GRANT} annotation. Anything that
 * is not the expected shape grants nothing.
 */
public final class ReferenceGrants {

  /** The API group of ReferenceGrants. */
  public static final String GROUP = "gateway.networking.k8s.io";

  /** The version read: served by every Gateway API release that has the kind. */
  public static final String VERSION = "v1beta1";

  public static final String KIND = "ReferenceGrant";
  public static final String PLURAL = "referencegrants";

  /** How many grants of one namespace are read at most (a namespace's owner writes them). */
  public static final int MAX_READ = 1_000;

  private static final String CLAIM = "PersistentVolumeClaim";

  private ReferenceGrants() {}

  /**
   * Whether any of the grants (each a ReferenceGrant's {@code spec}, as JSON maps) lets claims of
   * {@code fromNamespace} use the claim {@code sourceName} of the grants' namespace.
   */
  public static boolean allowClaim(
      List<Map<String, Object>> specs, String fromNamespace, String sourceName) {
    for (Map<String, Object> spec : specs) {
      if (spec != null
          && any(spec.get("from"), f -> core(f) && fromNamespace.equals(f.get("namespace")))
          && any(spec.get("to"), t -> core(t) && names(t, sourceName))) {
        return true;
      }
    }
    return false;
  }

  /** A PersistentVolumeClaim of the core group ({@code group: ""}). */
  private static boolean core(Map<?, ?> ref) {
    Object group = ref.get("group");
    return (group == null || "".equals(group)) && CLAIM.equals(ref.get("kind"));
  }

  /** Whether a {@code to} entry names the claim, or every claim (no name, or an empty one). */
  private static boolean names(Map<?, ?> to, String sourceName) {
    Object name = to.get("name");
    return name == null || "".equals(name) || sourceName.equals(name);
  }

  private static boolean any(Object list, java.util.function.Predicate<Map<?, ?>> test) {
    if (!(list instanceof List<?> entries)) {
      return false;
    }
    for (Object e : entries) {
      if (e instanceof Map<?, ?> m && test.test(m)) {
        return true;
      }
    }
    return false;
  }
}
