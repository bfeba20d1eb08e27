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

  /** The longest name Kubernetes takes for a claim or a class. */
  static final int MAX_NAME = 253;

  /** The longest namespace name. */
  static final int MAX_NAMESPACE = 63;

  // How much of a value that is not a name a message quotes: a tenant's annotation may hold 256
  // KiB, and the message goes into an event and a denial. Up to WHOLE characters a value is quoted
  // whole, so that a value already quoted (a start of CUT and the length) is not quoted again.
  private static final int WHOLE = 120;
  private static final int CUT = 80;

  /**
   * Whether {@code s} can name a claim or a class (a DNS subdomain, RFC 1123). The length is
   * checked before the pattern: a pattern's repeated group recurses once a label, and a name of
   * tens of thousands of labels would overflow the stack.
   */
  public static boolean isName(String s) {
    return s != null && s.length() <= MAX_NAME && NAME.matcher(s).matches();
  }

  /** Whether {@code s} can name a namespace (a DNS label). */
  public static boolean isNamespace(String s) {
    return s != null && s.length() <= MAX_NAMESPACE && NAMESPACE.matcher(s).matches();
  }

  /**
   * A value as a message may quote it: whole when short, else its start and its length, so that no
   * message grows with what a tenant wrote.
   */
  public static String quote(String value) {
    if (value == null) {
      return "null";
    }
    return value.length() <= WHOLE
        ? value
        : value.substring(0, CUT) + "... (" + value.length() + " characters)";
  }

  /**
   * Parses a {@code k8s.io/CloneRequest} value.
   *
   * @param targetNamespace the namespace of the claim that carries it (for a bare name)
   * @throws IllegalArgumentException saying what the value must look like
   */
  public static ClaimRef parseCloneRequest(String value, String targetNamespace) {
    // Nothing longer can be valid: refused before it is split or matched.
    boolean fits = value.length() <= MAX_NAMESPACE + 1 + MAX_NAME;
    String[] parts = fits ? value.split("/", -1) : new String[0];
    String ns = parts.length == 2 ? parts[0] : targetNamespace;
    String name = parts.length == 2 ? parts[1] : parts.length == 1 ? parts[0] : null;
    if (parts.length == 0 || parts.length > 2 || !isNamespace(ns) || !isName(name)) {
      throw new IllegalArgumentException(
          ClaimAnnotations.CLONE_REQUEST
              + " '"
              + quote(value)
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
              + (core ? "" : quote(apiGroup) + "/")
              + quote(kind)
              + " "
              + quote(name)
              + " cannot fill a Cinder volume: only a PersistentVolumeClaim can be the data source"
              + " (a clone)");
    }
    String ns = namespace == null || namespace.isEmpty() ? targetNamespace : namespace;
    if (!isName(name) || !isNamespace(ns)) {
      throw new IllegalArgumentException(
          "the data source PersistentVolumeClaim "
              + quote(ns)
              + "/"
              + quote(name)
              + " does not name a claim: each must be a valid Kubernetes name");
    }
    return new ClaimRef(ns, name);
  }

  @Override
  public String toString() {
    return namespace + "/" + name;
  }
}
