package org.standalonecinder.certs;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.regex.Pattern;

/** The DNS names under which the API server reaches a Service, for a serving certificate. */
public final class ServiceNames {

  private static final Pattern LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

  private ServiceNames() {}

  /**
   * {@code svc}, {@code svc.ns}, {@code svc.ns.svc} and {@code svc.ns.svc.cluster.local}, then the
   * extra names, without repeats.
   */
  public static List<String> of(String service, String namespace, List<String> extra) {
    requireLabel("service", service);
    requireLabel("namespace", namespace);
    LinkedHashSet<String> names = new LinkedHashSet<>();
    names.add(service);
    names.add(service + "." + namespace);
    names.add(service + "." + namespace + ".svc");
    names.add(service + "." + namespace + ".svc.cluster.local");
    names.addAll(extra);
    return new ArrayList<>(names);
  }

  private static void requireLabel(String what, String value) {
    if (value == null || !LABEL.matcher(value).matches()) {
      throw new IllegalArgumentException(
          what + " '" + value + "' is not a DNS label (lower-case letters, digits and '-')");
    }
  }
}
