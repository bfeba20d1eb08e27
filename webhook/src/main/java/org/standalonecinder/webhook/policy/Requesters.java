package org.standalonecinder.webhook.policy;

import io.fabric8.kubernetes.api.model.authentication.UserInfo;
import java.util.List;
import java.util.Set;

/**
 * Who really asks for a clone. A controller that creates claims for users (the statefulset
 * controller, the generic ephemeral volume controller, CDI, operators, CI systems) is a deputy: its
 * own rights say nothing about those of the user it acts for, and it typically may create pods
 * everywhere. So for a deputy a clone across namespaces needs consent on the source's side (the
 * source's clone grant), never its own rights, unless the admin trusts it by name (a backup
 * operator that checks its users' rights itself).
 *
 * <p>Deputies by default: every service account ({@code system:serviceaccount:*}, group {@code
 * system:serviceaccounts}), every node ({@code system:node:*}, group {@code system:nodes}), and the
 * controller manager and scheduler when they run with their own credentials. The admin adds more (a
 * controller that authenticates with a client certificate) and trusts some.
 *
 * @param deputies further users ({@code name}) and groups ({@code group:name}) that act for others
 * @param trusted deputies whose own rights count (same syntax)
 */
public record Requesters(Set<String> deputies, Set<String> trusted) {

  public static final Requesters DEFAULT = new Requesters(Set.of(), Set.of());

  private static final List<String> DEPUTY_PREFIXES =
      List.of("system:serviceaccount:", "system:node:");
  private static final Set<String> DEPUTY_USERS =
      Set.of("system:kube-controller-manager", "system:kube-scheduler");
  private static final Set<String> DEPUTY_GROUPS = Set.of("system:serviceaccounts", "system:nodes");

  public Requesters {
    deputies = deputies == null ? Set.of() : Set.copyOf(deputies);
    trusted = trusted == null ? Set.of() : Set.copyOf(trusted);
  }

  /** Whether the requester acts for others (and is not trusted): its own rights do not count. */
  boolean untrustedDeputy(UserInfo user) {
    return isDeputy(user) && !matches(trusted, user);
  }

  boolean isDeputy(UserInfo user) {
    String name = user.getUsername() == null ? "" : user.getUsername();
    // A review's groups may hold nulls (a hostile or broken one): never asked of a Set.of.
    List<String> groups = user.getGroups() == null ? List.of() : user.getGroups();
    return DEPUTY_PREFIXES.stream().anyMatch(name::startsWith)
        || DEPUTY_USERS.contains(name)
        || groups.stream().anyMatch(g -> g != null && DEPUTY_GROUPS.contains(g))
        || matches(deputies, user);
  }

  private static boolean matches(Set<String> names, UserInfo user) {
    if (names.isEmpty()) {
      return false;
    }
    if (user.getUsername() != null && names.contains(user.getUsername())) {
      return true;
    }
    return user.getGroups() != null
        && user.getGroups().stream().anyMatch(g -> g != null && names.contains("group:" + g));
  }
}
