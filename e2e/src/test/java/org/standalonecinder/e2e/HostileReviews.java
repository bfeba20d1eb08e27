package org.standalonecinder.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ContainerNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Makes admission requests as an attacker or a broken client would: real-shaped AdmissionReviews
 * (claims and classes, clone annotations, data sources, both API versions, both endpoints), then
 * broken in the tree (fields removed, nulled, of the wrong type, huge, deeply nested, in odd
 * Unicode), in the bytes (a key given twice, cut short, invalid UTF-8, flipped bytes), or in the
 * transport (content type, method, path). Everything comes from one seed, so a failing case is made
 * again by its seed and number.
 */
final class HostileReviews {

  static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  /** Where a case was broken: what the suite counts and the report lists. */
  enum Damage {
    NONE,
    TREE,
    BYTES,
    TRANSPORT
  }

  /**
   * One request to send.
   *
   * @param uid the request's uid when the review still carries it as a string, else null
   * @param tree the review before its bytes were broken (for the field-order property), or null
   *     when the bytes are not this tree's
   */
  record Case(
      int number,
      String method,
      String path,
      String contentType,
      byte[] body,
      String uid,
      Damage damage,
      String what,
      JsonNode tree) {}

  private static final String OURS = "openstack.org/standalone-cinder";
  private static final List<String> USERS =
      List.of(
          "alice",
          "bob",
          "system:serviceaccount:standalone-cinder:standalone-cinder",
          "system:admin");
  private static final List<String> CLASSES =
      List.of("e2e-cinder", "e2e-plain", "fuzz-missing", "");
  private static final List<String> CLONE_REQUESTS =
      List.of("src", "fuzz-b/src", "a/src/x", "A_B", "", "fuzz-a/" + "s".repeat(300), "/", "a/");
  private static final List<String> SIZES = List.of("1Gi", "2Gi", "0", "-1Gi", "1e100", "abc", "");
  private static final List<String> ODD_STRINGS =
      List.of(
          "",
          "\u0000",
          "\u202e\u0635\u0644",
          "\ud83d\udca5".repeat(50),
          "\ud800",
          "../../etc/passwd",
          "${jndi:ldap://x}",
          "%s%n%x",
          " ",
          "true",
          "1");

  private final Random random;

  HostileReviews(long seed) {
    this.random = new Random(seed);
  }

  Case next(int n) {
    ObjectNode review = review(n);
    String endpoint = random.nextBoolean() ? "/mutate" : "/validate";
    int roll = random.nextInt(100);
    if (roll < 15) {
      return build(n, endpoint, review, Damage.NONE, "as sent");
    }
    StringBuilder what = new StringBuilder();
    int times = 1 + random.nextInt(3);
    for (int i = 0; i < times; i++) {
      what.append(i == 0 ? "" : ", ").append(breakTree(review));
    }
    if (roll < 75) {
      return build(n, endpoint, review, Damage.TREE, what.toString());
    }
    if (roll < 96) {
      Broken broken = breakBytes(bytes(review));
      return new Case(
          n,
          "POST",
          endpoint,
          "application/json",
          broken.bytes(),
          null,
          Damage.BYTES,
          what + "; " + broken.how(),
          null);
    }
    return transport(n, endpoint, review, what.toString());
  }

  private Case build(int n, String endpoint, ObjectNode review, Damage damage, String what) {
    JsonNode uid = review.path("request").path("uid");
    return new Case(
        n,
        "POST",
        endpoint,
        "application/json",
        bytes(review),
        // A uid that is not well-formed Unicode (a lone surrogate) is not sent as itself.
        uid.isTextual() && StandardCharsets.UTF_8.newEncoder().canEncode(uid.asText())
            ? uid.asText()
            : null,
        damage,
        what,
        review);
  }

  private Case transport(int n, String endpoint, ObjectNode review, String what) {
    byte[] body = bytes(review);
    return switch (random.nextInt(5)) {
      case 0 ->
          new Case(
              n, "POST", endpoint, "text/plain", body, null, Damage.TRANSPORT, "text/plain", null);
      case 1 ->
          new Case(
              n, "POST", endpoint, null, body, null, Damage.TRANSPORT, "no content type", null);
      case 2 ->
          new Case(n, "GET", endpoint, null, new byte[0], null, Damage.TRANSPORT, "GET", null);
      case 3 ->
          new Case(
              n,
              "POST",
              "/nope",
              "application/json",
              body,
              null,
              Damage.TRANSPORT,
              "a wrong path",
              null);
      default ->
          new Case(
              n,
              "POST",
              endpoint,
              "application/json",
              new byte[0],
              null,
              Damage.TRANSPORT,
              "an empty body",
              null);
    };
  }

  static byte[] bytes(JsonNode tree) {
    try {
      return JSON.writeValueAsBytes(tree);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  // ---- real-shaped reviews ----

  private <T> T pick(List<T> from) {
    return from.get(random.nextInt(from.size()));
  }

  private ObjectNode review(int n) {
    ObjectNode review = NODES.objectNode();
    review.put(
        "apiVersion", random.nextInt(4) == 0 ? "admission.k8s.io/v1beta1" : "admission.k8s.io/v1");
    review.put("kind", "AdmissionReview");
    ObjectNode request = review.putObject("request");
    request.put("uid", "fuzz-" + n + "-" + Long.toHexString(random.nextLong()));
    boolean claim = random.nextInt(5) > 0;
    String ns = random.nextBoolean() ? "fuzz-a" : "fuzz-b";
    String name = "c" + random.nextInt(5);
    ObjectNode kind = request.putObject("kind");
    kind.put("group", claim ? "" : "storage.k8s.io");
    kind.put("version", "v1");
    kind.put("kind", claim ? "PersistentVolumeClaim" : "StorageClass");
    ObjectNode resource = request.putObject("resource");
    resource.put("group", claim ? "" : "storage.k8s.io");
    resource.put("version", "v1");
    resource.put("resource", claim ? "persistentvolumeclaims" : "storageclasses");
    request.put("name", name);
    if (claim) {
      request.put("namespace", ns);
    }
    int op = random.nextInt(10);
    String operation = op < 7 ? "CREATE" : op < 9 ? "UPDATE" : "DELETE";
    request.put("operation", operation);
    ObjectNode user = request.putObject("userInfo");
    user.put("username", pick(USERS));
    user.putArray("groups").add("system:authenticated");
    ObjectNode object = claim ? claim(ns, name) : storageClass(name);
    if (!"DELETE".equals(operation)) {
      request.set("object", object);
    }
    if (!"CREATE".equals(operation)) {
      request.set("oldObject", claim ? claim(ns, name) : storageClass(name));
    }
    request.put("dryRun", random.nextInt(10) == 0);
    return review;
  }

  private ObjectNode claim(String ns, String name) {
    ObjectNode pvc = NODES.objectNode();
    pvc.put("apiVersion", "v1");
    pvc.put("kind", "PersistentVolumeClaim");
    ObjectNode meta = pvc.putObject("metadata");
    meta.put("name", name);
    meta.put("namespace", ns);
    if (random.nextBoolean()) {
      meta.put("creationTimestamp", "2026-11-23T10:00:00Z");
    }
    // What the API server adds to claims it has stored (on updates, in oldObject), and what
    // kubectl and controllers add: every field of the metadata a reader could meet.
    if (random.nextInt(3) == 0) {
      meta.put("uid", "0b6c3f2e-1111-4e5a-9c1d-" + Long.toHexString(random.nextLong()));
      meta.put("resourceVersion", Integer.toString(random.nextInt(100000)));
      meta.put("generation", random.nextInt(5));
      meta.put("selfLink", "/api/v1/namespaces/" + ns + "/persistentvolumeclaims/" + name);
      meta.putArray("finalizers").add("kubernetes.io/pvc-protection");
    }
    if (random.nextInt(3) == 0) {
      meta.putObject("labels").put("app.kubernetes.io/name", "postgres").put("tier", "db");
    }
    if (random.nextInt(4) == 0) {
      meta.put("generateName", "data-");
      ObjectNode owner = meta.putArray("ownerReferences").addObject();
      owner.put("apiVersion", "apps/v1").put("kind", "StatefulSet").put("name", "db");
      owner.put("uid", "5f0a3d1e-2b4c").put("controller", true).put("blockOwnerDeletion", true);
    }
    if (random.nextInt(6) == 0) {
      meta.put("deletionTimestamp", "2026-11-23T11:00:00Z");
      meta.put("deletionGracePeriodSeconds", 0);
    }
    if (random.nextInt(3) == 0) {
      ObjectNode managed = meta.putArray("managedFields").addObject();
      managed.put("manager", "kubectl-client-side-apply").put("operation", "Update");
      managed.put("apiVersion", "v1").put("time", "2026-11-23T10:00:00Z");
      managed.put("fieldsType", "FieldsV1");
      managed
          .putObject("fieldsV1")
          .putObject("f:spec")
          .putObject("f:resources")
          .putObject("f:requests")
          .putObject("f:storage");
    }
    if (random.nextInt(10) == 0) {
      meta.put("clusterName", "unknown to the model");
    }
    ObjectNode annotations = meta.putObject("annotations");
    if (random.nextInt(3) > 0) {
      annotations.put("k8s.io/CloneRequest", pick(CLONE_REQUESTS));
    }
    if (random.nextInt(6) == 0) {
      annotations.put("k8s.io/CloneOf", pick(CLONE_REQUESTS));
    }
    if (random.nextInt(8) == 0) {
      annotations.put(
          "standalone-cinder.io/clone-token", "v1." + Long.toHexString(random.nextLong()));
    }
    ObjectNode spec = pvc.putObject("spec");
    ArrayNode modes = spec.putArray("accessModes");
    modes.add(pick(List.of("ReadWriteOnce", "ReadWriteMany", "ReadOnlyMany", "Nonsense")));
    String className = pick(CLASSES);
    if (random.nextInt(8) > 0) {
      spec.put("storageClassName", className);
    }
    if (random.nextInt(3) == 0) {
      spec.put("volumeMode", random.nextBoolean() ? "Block" : "Filesystem");
    }
    spec.putObject("resources").putObject("requests").put("storage", pick(SIZES));
    if (random.nextInt(5) == 0) {
      ObjectNode ds = spec.putObject("dataSource");
      ds.put("kind", pick(List.of("PersistentVolumeClaim", "VolumeSnapshot", "Populator")));
      ds.put("name", "src");
      if (random.nextBoolean()) {
        ds.put("apiGroup", "snapshot.storage.k8s.io");
      }
      ObjectNode ref = spec.putObject("dataSourceRef");
      ref.setAll(ds);
      if (random.nextBoolean()) {
        ref.put("namespace", "fuzz-b");
      }
    }
    if (random.nextInt(4) == 0) {
      spec.put("volumeName", "pvc-" + Long.toHexString(random.nextLong()));
      spec.putObject("resources").putObject("limits").put("storage", pick(SIZES));
    }
    if (random.nextInt(6) == 0) {
      spec.putObject("selector").putObject("matchLabels").put("zone", "a");
    }
    if (random.nextInt(10) == 0) {
      spec.put("volumeAttributesClassName", "gold");
    }
    if (random.nextInt(3) == 0) {
      ObjectNode status = pvc.putObject("status");
      status.put("phase", pick(List.of("Pending", "Bound", "Lost")));
      status.putArray("accessModes").add("ReadWriteOnce");
      status.putObject("capacity").put("storage", pick(SIZES));
    }
    if (random.nextInt(10) == 0) {
      pvc.put("extra", "unknown to the model");
    }
    return pvc;
  }

  private ObjectNode storageClass(String name) {
    ObjectNode sc = NODES.objectNode();
    sc.put("apiVersion", "storage.k8s.io/v1");
    sc.put("kind", "StorageClass");
    sc.putObject("metadata").put("name", "fuzz-" + name);
    sc.put("provisioner", random.nextInt(4) > 0 ? OURS : "example.com/other");
    ObjectNode params = sc.putObject("parameters");
    for (Map.Entry<String, List<String>> p :
        Map.of(
                "smartclone", List.of("true", "false", "", "TRUE", "yes"),
                "SmartClone", List.of("true", "x"),
                "type", List.of("fast", ""),
                "fsType", List.of("ext4", "ext4; rm -rf /", ""),
                "rbdForm", List.of("csi", "krbd"),
                "tpye", List.of("fast"))
            .entrySet()) {
      if (random.nextInt(3) == 0) {
        params.put(p.getKey(), pick(p.getValue()));
      }
    }
    return sc;
  }

  // ---- breaking the tree ----

  private record Slot(ContainerNode<?> parent, String field, int index) {}

  private String breakTree(ObjectNode review) {
    List<Slot> slots = new ArrayList<>();
    collect(review, slots, 0);
    Slot slot = slots.get(random.nextInt(slots.size()));
    String where = slot.field != null ? slot.field : "[" + slot.index + "]";
    int op = random.nextInt(12);
    if (op == 0) {
      if (slot.parent instanceof ObjectNode o) {
        o.remove(slot.field);
      } else {
        ((ArrayNode) slot.parent).remove(slot.index);
      }
      return "removed " + where;
    }
    JsonNode value;
    String what;
    switch (op) {
      case 1 -> {
        value = NODES.nullNode();
        what = "null";
      }
      case 2 -> {
        value =
            random.nextBoolean()
                ? NODES.numberNode(random.nextLong())
                : NODES.numberNode(random.nextBoolean() ? 1e308 : -0.0);
        what = "a number";
      }
      case 3 -> {
        value = NODES.booleanNode(random.nextBoolean());
        what = "a boolean";
      }
      case 4 -> {
        value = NODES.objectNode().put("x", 1);
        what = "an object";
      }
      case 5 -> {
        value = NODES.arrayNode().add("x");
        what = "an array";
      }
      case 6 -> {
        // Now and then over the 3 MiB body limit.
        int size = random.nextInt(40) == 0 ? 3_200_000 : 1 + random.nextInt(200_000);
        value = NODES.textNode("x".repeat(size));
        what = "a string of " + size;
      }
      case 7 -> {
        int size = 1 + random.nextInt(random.nextInt(20) == 0 ? 200_000 : 2_000);
        ArrayNode a = NODES.arrayNode();
        for (int i = 0; i < size; i++) {
          a.add(i);
        }
        value = a;
        what = "an array of " + size;
      }
      case 8 -> {
        int depth = 1 + random.nextInt(120);
        JsonNode nested = NODES.textNode("deep");
        for (int i = 0; i < depth; i++) {
          nested =
              random.nextBoolean()
                  ? NODES.arrayNode().add(nested)
                  : NODES.objectNode().set("d", nested);
        }
        value = nested;
        what = "nested " + depth + " deep";
      }
      case 9 -> {
        value = NODES.textNode(pick(ODD_STRINGS));
        what = "an odd string";
      }
      case 10 -> {
        JsonNode old = get(slot);
        value = NODES.arrayNode().add(old == null ? NODES.nullNode() : old);
        what = "wrapped in an array";
      }
      default -> {
        value = NODES.textNode(String.valueOf(random.nextInt()));
        what = "digits as a string";
      }
    }
    if (slot.parent instanceof ObjectNode o) {
      o.set(slot.field, value);
    } else {
      ((ArrayNode) slot.parent).set(slot.index, value);
    }
    return where + " := " + what;
  }

  private static JsonNode get(Slot slot) {
    return slot.parent instanceof ObjectNode o ? o.get(slot.field) : slot.parent.get(slot.index);
  }

  private static void collect(JsonNode node, List<Slot> slots, int depth) {
    if (depth > 20) {
      return;
    }
    if (node instanceof ObjectNode o) {
      for (Iterator<String> it = o.fieldNames(); it.hasNext(); ) {
        String f = it.next();
        slots.add(new Slot(o, f, -1));
        collect(o.get(f), slots, depth + 1);
      }
    } else if (node instanceof ArrayNode a) {
      for (int i = 0; i < Math.min(a.size(), 50); i++) {
        slots.add(new Slot(a, null, i));
        collect(a.get(i), slots, depth + 1);
      }
    }
  }

  // ---- breaking the bytes ----

  private record Broken(byte[] bytes, String how) {}

  private Broken breakBytes(byte[] bytes) {
    switch (random.nextInt(5)) {
      case 0 -> {
        // A key given twice: "k": null inserted before an existing "k":
        String text = new String(bytes, StandardCharsets.UTF_8);
        List<Integer> keys = new ArrayList<>();
        for (int i = text.indexOf("\":");
            i >= 0 && keys.size() < 200;
            i = text.indexOf("\":", i + 1)) {
          keys.add(i);
        }
        if (keys.isEmpty()) {
          // A body broken down to no key at all (seen in CI): cut it instead.
          return new Broken(java.util.Arrays.copyOf(bytes, bytes.length / 2), "cut in half");
        }
        int end = keys.get(random.nextInt(keys.size()));
        int start = text.lastIndexOf('"', end - 1);
        String key = text.substring(start, end + 2);
        return new Broken(
            (text.substring(0, start) + key + "null," + text.substring(start))
                .getBytes(StandardCharsets.UTF_8),
            "key " + key + " twice");
      }
      case 1 -> {
        int at = random.nextInt(bytes.length);
        return new Broken(java.util.Arrays.copyOf(bytes, at), "cut at " + at);
      }
      case 2 -> {
        byte[][] invalid = {
          {(byte) 0xFF},
          {(byte) 0xC3, 0x28},
          {(byte) 0xED, (byte) 0xA0, (byte) 0x80},
          {(byte) 0xF8, (byte) 0x88, (byte) 0x80, (byte) 0x80, (byte) 0x80}
        };
        byte[] bad = invalid[random.nextInt(invalid.length)];
        int at = random.nextInt(bytes.length);
        byte[] out = new byte[bytes.length + bad.length];
        System.arraycopy(bytes, 0, out, 0, at);
        System.arraycopy(bad, 0, out, at, bad.length);
        System.arraycopy(bytes, at, out, at + bad.length, bytes.length - at);
        return new Broken(out, "invalid UTF-8 at " + at);
      }
      case 3 -> {
        byte[] out = bytes.clone();
        int flips = 1 + random.nextInt(5);
        for (int i = 0; i < flips; i++) {
          out[random.nextInt(out.length)] ^= (byte) (1 << random.nextInt(8));
        }
        return new Broken(out, flips + " bits flipped");
      }
      default -> {
        return new Broken(new byte[0], "no body");
      }
    }
  }

  /** The same tree with every object's fields in another order (arrays keep theirs). */
  JsonNode shuffled(JsonNode node) {
    if (node instanceof ObjectNode o) {
      List<String> names = new ArrayList<>();
      o.fieldNames().forEachRemaining(names::add);
      Collections.shuffle(names, random);
      ObjectNode copy = NODES.objectNode();
      for (String name : names) {
        copy.set(name, shuffled(o.get(name)));
      }
      return copy;
    }
    if (node instanceof ArrayNode a) {
      ArrayNode copy = NODES.arrayNode();
      a.forEach(e -> copy.add(shuffled(e)));
      return copy;
    }
    return node;
  }
}
