package org.standalonecinder.api;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The parameters of one of our StorageClasses, typed.
 *
 * <p>Keys are matched case-insensitively ({@code fsType}, {@code fstype}). Every problem is
 * collected and reported at once; an unknown key gets a suggestion when it is close to a known one.
 *
 * @param volumeType the Cinder volume type, or null for the cloud's default
 * @param availabilityZone the Cinder availability zone, or null
 * @param fsType the filesystem for Filesystem-mode PVs, or null for the node's default
 * @param smartclone whether claims of this class may be clones of other claims: {@code "true"}, or
 *     an empty value (the Go standalone-cinder's form, where the key's presence enabled cloning)
 * @param rbdForm for volumes Cinder exports over RBD: {@code rbd} (the in-tree plugin, Kubernetes
 *     up to 1.30) or {@code csi} (a static ceph-csi PV), or null for the provisioner's default
 * @param cephClusterId the ceph-csi {@code clusterID} of the Ceph cluster behind this class, or
 *     null for the provisioner's default
 * @param cephxSecret the Secret, in the provisioner's namespace, holding the cephx key of the Ceph
 *     user Cinder names, or null for the provisioner's default
 * @param iscsiChap {@code required} or {@code optional}: whether an iSCSI export without CHAP may
 *     become a PV of this class, or null for the provisioner's default (required)
 * @param maxSizeGib the largest volume a claim of this class may have, when made or grown, in GiB;
 *     null for the provisioner's own bound ({@link #MAX_GIB})
 */
public record ClassParameters(
    String volumeType,
    String availabilityZone,
    String fsType,
    boolean smartclone,
    String rbdForm,
    String cephClusterId,
    String cephxSecret,
    String iscsiChap,
    Integer maxSizeGib) {

  /** The largest volume the provisioner asks Cinder for, whatever the class; 64 TiB. */
  public static final int MAX_GIB = 64 * 1024;

  /** Without a size bound. */
  public ClassParameters(
      String volumeType,
      String availabilityZone,
      String fsType,
      boolean smartclone,
      String rbdForm,
      String cephClusterId,
      String cephxSecret,
      String iscsiChap) {
    this(
        volumeType,
        availabilityZone,
        fsType,
        smartclone,
        rbdForm,
        cephClusterId,
        cephxSecret,
        iscsiChap,
        null);
  }

  /** The largest volume of this class, in GiB: its {@code maxSizeGiB}, or {@link #MAX_GIB}. */
  public int largestGib() {
    return maxSizeGib == null ? MAX_GIB : maxSizeGib;
  }

  /** Without any Ceph or CHAP parameter. */
  public ClassParameters(
      String volumeType, String availabilityZone, String fsType, boolean smartclone) {
    this(volumeType, availabilityZone, fsType, smartclone, null, null, null, null);
  }

  /** Without a CHAP parameter. */
  public ClassParameters(
      String volumeType,
      String availabilityZone,
      String fsType,
      boolean smartclone,
      String rbdForm,
      String cephClusterId,
      String cephxSecret) {
    this(
        volumeType,
        availabilityZone,
        fsType,
        smartclone,
        rbdForm,
        cephClusterId,
        cephxSecret,
        null);
  }

  /** The keys, in their documented spelling. */
  public static final List<String> KEYS =
      List.of(
          "type",
          "availability",
          "fsType",
          "smartclone",
          "rbdForm",
          "cephClusterID",
          "cephxSecret",
          "iscsiChap",
          "maxSizeGiB");

  /** The values of {@code iscsiChap}. */
  public static final List<String> ISCSI_CHAP = List.of("required", "optional");

  /** The values of {@code rbdForm}. */
  public static final List<String> RBD_FORMS = List.of("rbd", "csi");

  private static final Pattern FS_TYPE = Pattern.compile("[a-z0-9]{1,16}");

  // Names of Secrets and CSI drivers: DNS subdomains.
  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

  /** Whether {@code s} is a DNS subdomain (RFC 1123), as Secret names must be. */
  public static boolean isDnsSubdomain(String s) {
    return s != null && s.length() <= 253 && DNS_SUBDOMAIN.matcher(s).matches();
  }

  // ceph-csi looks the id up in its config map; any printable token without spaces does.
  private static final Pattern CLUSTER_ID = Pattern.compile("[A-Za-z0-9._-]{1,128}");

  /** Whether the class says anything about Ceph: then its claims are expected to be RBD. */
  public boolean namesCeph() {
    return rbdForm != null || cephClusterId != null || cephxSecret != null;
  }

  /**
   * Parses a StorageClass's parameters.
   *
   * @throws InvalidClassParametersException with every problem listed
   */
  public static ClassParameters parse(Map<String, String> params) {
    String type = null;
    String zone = null;
    String fsType = null;
    boolean smartclone = false;
    String rbdForm = null;
    String cephClusterId = null;
    String cephxSecret = null;
    String iscsiChap = null;
    Integer maxSizeGib = null;
    List<String> problems = new ArrayList<>();
    Map<String, String> spellings = new java.util.TreeMap<>();
    // In key order, so that the problems are listed the same way whatever order the map has.
    for (Map.Entry<String, String> e :
        new java.util.TreeMap<>(params == null ? Map.<String, String>of() : params).entrySet()) {
      String key = e.getKey();
      String earlier = spellings.put(key.toLowerCase(Locale.ROOT), key);
      if (earlier != null) {
        // SmartClone: "false" and smartclone: "true" in one class: neither can be meant.
        problems.add(
            "parameter "
                + ClaimRef.quote(key)
                + " is given twice ("
                + ClaimRef.quote(earlier)
                + ", "
                + ClaimRef.quote(key)
                + ")");
        continue;
      }
      String value = e.getValue() == null ? "" : e.getValue().trim();
      switch (key.toLowerCase(Locale.ROOT)) {
        case "type" -> type = nonEmpty(key, value, problems);
        case "availability" -> zone = nonEmpty(key, value, problems);
        case "fstype" -> {
          fsType = nonEmpty(key, value, problems);
          if (fsType != null && !FS_TYPE.matcher(fsType).matches()) {
            problems.add(
                "parameter "
                    + key
                    + "='"
                    + ClaimRef.quote(value)
                    + "' is not a filesystem name such as ext4 or xfs");
          }
        }
        case "smartclone" -> {
          switch (value.toLowerCase(Locale.ROOT)) {
              // The Go standalone-cinder enabled cloning by the key's presence, and documented
              // `smartclone: ""`: its classes keep their meaning here.
            case "true", "" -> smartclone = true;
            case "false" -> smartclone = false;
            default ->
                problems.add(
                    "parameter "
                        + key
                        + "='"
                        + ClaimRef.quote(value)
                        + "' must be \"true\" or \"false\"");
          }
        }
        case "rbdform" ->
            rbdForm =
                oneOf(
                    key,
                    value,
                    RBD_FORMS,
                    "\"rbd\" (the in-tree plugin, Kubernetes up to 1.30) or \"csi\" (ceph-csi)",
                    problems);
        case "cephclusterid" -> {
          cephClusterId = nonEmpty(key, value, problems);
          if (cephClusterId != null && !CLUSTER_ID.matcher(cephClusterId).matches()) {
            problems.add(
                "parameter "
                    + key
                    + "='"
                    + ClaimRef.quote(value)
                    + "' is not a ceph-csi clusterID (letters, digits, '.', '_' and '-')");
          }
        }
        case "cephxsecret" -> {
          cephxSecret = nonEmpty(key, value, problems);
          if (cephxSecret != null && !isDnsSubdomain(cephxSecret)) {
            problems.add(
                "parameter "
                    + key
                    + "='"
                    + ClaimRef.quote(value)
                    + "' is not a Secret name (a DNS subdomain)");
          }
        }
        case "iscsichap" ->
            iscsiChap =
                oneOf(
                    key,
                    value,
                    ISCSI_CHAP,
                    "\"required\" (the default) or \"optional\" (an export without CHAP may be"
                        + " used: any pod that reaches the portal can read it)",
                    problems);
        case "maxsizegib" -> maxSizeGib = gib(key, value, problems);
        default ->
            problems.add("unknown parameter '" + ClaimRef.quote(key) + "'" + suggestion(key));
      }
    }
    if (!problems.isEmpty()) {
      throw new InvalidClassParametersException(problems);
    }
    return new ClassParameters(
        type, zone, fsType, smartclone, rbdForm, cephClusterId, cephxSecret, iscsiChap, maxSizeGib);
  }

  /** A whole number of GiB from 1 to {@link #MAX_GIB}; a problem saying so otherwise. */
  private static Integer gib(String key, String value, List<String> problems) {
    String v = nonEmpty(key, value, problems);
    if (v == null) {
      return null;
    }
    if (v.length() <= 5 && v.chars().allMatch(Character::isDigit)) {
      int n = Integer.parseInt(v);
      if (n >= 1 && n <= MAX_GIB) {
        return n;
      }
    }
    problems.add(
        "parameter "
            + key
            + "='"
            + ClaimRef.quote(value)
            + "' must be a whole number of GiB from 1 to "
            + MAX_GIB
            + " (e.g. \"500\" for 500Gi)");
    return null;
  }

  /** One of the allowed values, in lower case; a problem saying which are allowed otherwise. */
  private static String oneOf(
      String key, String value, List<String> allowed, String must, List<String> problems) {
    String v = nonEmpty(key, value, problems);
    if (v == null) {
      return null;
    }
    v = v.toLowerCase(Locale.ROOT);
    if (!allowed.contains(v)) {
      problems.add("parameter " + key + "='" + ClaimRef.quote(value) + "' must be " + must);
    }
    return v;
  }

  private static String nonEmpty(String key, String value, List<String> problems) {
    if (value.isEmpty()) {
      problems.add("parameter " + key + " is empty");
      return null;
    }
    return value;
  }

  private static String suggestion(String key) {
    String k = key.toLowerCase(Locale.ROOT).replaceAll("[^a-z]", "");
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String known : KEYS) {
      String kn = known.toLowerCase(Locale.ROOT);
      int d = k.startsWith(kn) || kn.startsWith(k) && k.length() >= 3 ? 1 : distance(k, kn);
      if (d == 0) {
        d = -1; // fs_type -> fstype: the same key spelt differently
      }
      if (d < bestDistance) {
        best = known;
        bestDistance = d;
      }
    }
    return bestDistance <= 2 ? "; did you mean '" + best + "'?" : "";
  }

  /** Levenshtein distance, for "did you mean". */
  static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int sub = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        cur[j] = Math.min(sub, Math.min(prev[j] + 1, cur[j - 1] + 1));
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
