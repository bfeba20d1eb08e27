package org.standalonecinder.api;

import java.util.regex.Pattern;

/**
 * A claim by namespace and name: the source of a clone.
 *
 * @param namespace the claim's namespace
 * @param name the claim's name
 */
public record ClaimRef(String namespace, String name) {

  /**
   * Whether a {@link ClaimAnnotations#CLONE_GRANT} value ({@code ns1,ns2}, spaces allowed) names
   * the namespace.
   *
   * @param grant the annotation's value, or null for none
   */
  public static boolean grants(String grant, String namespace) {
    if (grant == null || namespace == null) {
      return false;
    }
    for (String ns : grant.split(",")) {
      if (ns.trim().equals(namespace)) {
        return true;
      }
    }
    return false;
  }

  private static final Pattern NAME =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern NAMESPACE = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

  /** Whether {@code s} can name a claim or a class (a DNS subdomain, RFC 1123). */
  public static boolean isName(String s) {
    return s != null && s.length() <= 253 && NAME.matcher(s).matches();
  }

  /** Whether {@code s} can name a namespace (a DNS label). */
  public static boolean isNamespace(String s) {
    return s != null && NAMESPACE.matcher(s).matches();
  }

  /**
   * Parses a {@code k8s.io/CloneRequest} value.
   *
   * @param targetNamespace the namespace of the claim that carries it (for a bare name)
   * @throws IllegalArgumentException saying what the value must look like
   */
  public static ClaimRef parseCloneRequest(String value, String targetNamespace) {
    String[] parts = value.split("/", -1);
    String ns = parts.length == 2 ? parts[0] : targetNamespace;
    String name = parts.length == 2 ? parts[1] : parts[0];
    if (parts.length > 2
        || ns == null
        || !NAMESPACE.matcher(ns).matches()
        || !NAME.matcher(name).matches()
        || name.length() > 253) {
      throw new IllegalArgumentException(
          ClaimAnnotations.CLONE_REQUEST
              + " '"
              + value
              + "' must be <claim> or <namespace>/<claim>, each a valid Kubernetes name");
    }
    return new ClaimRef(ns, name);
  }

  /**
   * The claim a native data source ({@code dataSourceRef}, or {@code dataSource}) names. Only a
   * claim can fill one of our volumes: anything else (a VolumeSnapshot, a populator) would give a
   * blank volume where the user expects data.
   *
   * @param namespace the data source's namespace (dataSourceRef only), or null
   * @param targetNamespace the namespace of the claim that has the data source
   * @throws IllegalArgumentException for any other kind, saying so
   */
  public static ClaimRef fromDataSource(
      String apiGroup, String kind, String name, String namespace, String targetNamespace) {
    boolean core = apiGroup == null || apiGroup.isEmpty();
    if (!core || !"PersistentVolumeClaim".equals(kind)) {
      throw new IllegalArgumentException(
          "the data source "
              + (core ? "" : apiGroup + "/")
              + kind
              + " "
              + name
              + " cannot fill a Cinder volume: only a PersistentVolumeClaim can be the data source"
              + " (a clone)");
    }
    String ns = namespace == null || namespace.isEmpty() ? targetNamespace : namespace;
    if (name == null
        || !NAME.matcher(name).matches()
        || name.length() > 253
        || ns == null
        || !NAMESPACE.matcher(ns).matches()) {
      throw new IllegalArgumentException(
          "the data source PersistentVolumeClaim "
              + ns
              + "/"
              + name
              + " does not name a claim: each must be a valid Kubernetes name");
    }
    return new ClaimRef(ns, name);
  }

  @Override
  public String toString() {
    return namespace + "/" + name;
  }
}
