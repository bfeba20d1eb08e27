package org.standalonecinder.webhook.policy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A Kubernetes label selector ({@code matchLabels} and {@code matchExpressions} with In, NotIn,
 * Exists, DoesNotExist). {@link #NOTHING} matches no object, unlike an empty selector, which
 * Kubernetes defines as matching everything.
 */
public final class LabelSelector {

  /** Matches nothing: the default for exemptions. */
  public static final LabelSelector NOTHING = new LabelSelector(null, List.of());

  private record Requirement(String key, String operator, List<String> values) {}

  private final Map<String, String> matchLabels;
  private final List<Requirement> expressions;

  private LabelSelector(Map<String, String> matchLabels, List<Requirement> expressions) {
    this.matchLabels = matchLabels;
    this.expressions = expressions;
  }

  @Override
  public String toString() {
    if (matchLabels == null) {
      return "nothing";
    }
    return "matchLabels=" + matchLabels + " matchExpressions=" + expressions;
  }

  /** Parses the YAML structure of a selector. */
  static LabelSelector parse(Object raw) {
    if (!(raw instanceof Map<?, ?> m)) {
      throw new IllegalArgumentException(
          "must be a label selector (matchLabels, matchExpressions)");
    }
    for (Object k : m.keySet()) {
      if (!List.of("matchLabels", "matchExpressions").contains(String.valueOf(k))) {
        throw new IllegalArgumentException("unknown key '" + k + "'");
      }
    }
    Map<String, String> labels = new java.util.LinkedHashMap<>();
    if (m.get("matchLabels") instanceof Map<?, ?> ml) {
      ml.forEach((k, v) -> labels.put(String.valueOf(k), String.valueOf(v)));
    } else if (m.get("matchLabels") != null) {
      throw new IllegalArgumentException("matchLabels must be a map");
    }
    List<Requirement> reqs = new ArrayList<>();
    Object me = m.get("matchExpressions");
    if (me != null) {
      if (!(me instanceof List<?> list)) {
        throw new IllegalArgumentException("matchExpressions must be a list");
      }
      for (Object o : list) {
        if (!(o instanceof Map<?, ?> e) || e.get("key") == null || e.get("operator") == null) {
          throw new IllegalArgumentException("each matchExpression needs a key and an operator");
        }
        String op = String.valueOf(e.get("operator"));
        List<String> values = new ArrayList<>();
        if (e.get("values") instanceof List<?> vs) {
          vs.forEach(v -> values.add(String.valueOf(v)));
        }
        switch (op) {
          case "In", "NotIn" -> {
            if (values.isEmpty()) {
              throw new IllegalArgumentException("operator " + op + " needs values");
            }
          }
          case "Exists", "DoesNotExist" -> {
            if (!values.isEmpty()) {
              throw new IllegalArgumentException("operator " + op + " takes no values");
            }
          }
          default ->
              throw new IllegalArgumentException(
                  "operator '" + op + "' must be In, NotIn, Exists or DoesNotExist");
        }
        reqs.add(new Requirement(String.valueOf(e.get("key")), op, values));
      }
    }
    return new LabelSelector(labels, reqs);
  }

  /** Whether an object with these labels is selected. */
  public boolean matches(Map<String, String> labels) {
    if (matchLabels == null) {
      return false;
    }
    Map<String, String> l = labels == null ? Map.of() : labels;
    for (Map.Entry<String, String> e : matchLabels.entrySet()) {
      if (!e.getValue().equals(l.get(e.getKey()))) {
        return false;
      }
    }
    for (Requirement r : expressions) {
      boolean has = l.containsKey(r.key());
      boolean ok =
          switch (r.operator()) {
            case "In" -> has && r.values().contains(l.get(r.key()));
            case "NotIn" -> !has || !r.values().contains(l.get(r.key()));
            case "Exists" -> has;
            default -> !has;
          };
      if (!ok) {
        return false;
      }
    }
    return true;
  }
}
