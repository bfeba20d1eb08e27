package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.standalonecinder.demo.LocalInstall;

/**
 * The manifests' RBAC against the calls the code made in this run, as the API server's audit log
 * recorded them (every request of the standalone-cinder namespace's ServiceAccounts, with the
 * authorizer's decision): no call of ours was refused (a rule is missing), and every rule was
 * needed by some call (a rule grants what no call needs). Runs last: it reads the calls of the
 * whole suite.
 */
@ExtendWith(Installed.class)
// After the classes that run beside the others too.
@RunsAfter(NodeLossE2EIT.class)
@Order(Integer.MAX_VALUE)
class RbacAuditE2EIT {

  /**
   * Rules the suite cannot reach without fault injection, each with why it exists. Anything here is
   * granted on trust: keep it short.
   */
  private static final Map<String, String> UNEXERCISED =
      Map.of(
          "standalone-cinder patch secrets",
          "a retried provisioning whose CHAP Secret exists already replaces its credentials"
              + " (VolumeProvisionerTest's rollback rows)",
          "standalone-cinder get storageclasses",
          "a claim that reaches the provisioner before its class reached the cache (a class and"
              + " claim applied together; ProvisioningTest)",
          "standalone-cinder get volumesnapshotclasses",
          "a VolumeSnapshot that reaches the provisioner before its class reached the cache (a"
              + " class and snapshot applied together; SnapshotsTest)");

  /** One grant of a rule: a verb on a resource of a group, maybe by name, maybe in a namespace. */
  record Grant(
      String account,
      String group,
      String resource,
      String verb,
      List<String> names,
      String namespace) {

    boolean covers(AuditLog.Call c) {
      return c.allowed()
          && c.user().equals("system:serviceaccount:" + LocalInstall.NS + ":" + account)
          && c.group().equals(group)
          && c.resource().equals(resource)
          && c.verb().equals(verb)
          && (namespace == null || namespace.equals(c.namespace()))
          && (names.isEmpty() || names.contains(c.name()));
    }

    String describe() {
      return account
          + " "
          + verb
          + " "
          + (group.isEmpty() ? "" : group + "/")
          + resource
          + (names.isEmpty() ? "" : " " + names)
          + (namespace == null ? "" : " in " + namespace);
    }
  }

  /**
   * The grants of the manifests as kubectl renders them, by ServiceAccount: the installation's and
   * manifests/adopt-go's, which GoMigrationE2EIT applies for its part of the run.
   */
  private List<Grant> grants(LocalInstall it) {
    String yaml =
        it.kubectl
                .ok(null, "kustomize", it.root.resolve("dev/kube-local/manifests").toString())
                .out()
            + "\n---\n"
            + it.kubectl
                .ok(null, "kustomize", it.root.resolve("manifests/adopt-go").toString())
                .out();
    List<HasMetadata> objects =
        it.admin.load(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8))).items();
    List<Grant> grants = new ArrayList<>();
    for (HasMetadata o : objects) {
      List<Subject> subjects;
      String roleKind;
      String roleName;
      String namespace;
      if (o instanceof ClusterRoleBinding b) {
        subjects = b.getSubjects();
        roleKind = b.getRoleRef().getKind();
        roleName = b.getRoleRef().getName();
        namespace = null;
      } else if (o instanceof RoleBinding b) {
        subjects = b.getSubjects();
        roleKind = b.getRoleRef().getKind();
        roleName = b.getRoleRef().getName();
        namespace = b.getMetadata().getNamespace();
      } else {
        continue;
      }
      List<PolicyRule> rules = rules(objects, roleKind, roleName, namespace);
      for (Subject s : subjects) {
        for (PolicyRule r : rules) {
          for (String g : r.getApiGroups()) {
            for (String res : r.getResources()) {
              for (String v : r.getVerbs()) {
                grants.add(
                    new Grant(
                        s.getName(),
                        g,
                        res,
                        v,
                        r.getResourceNames() == null ? List.of() : r.getResourceNames(),
                        namespace));
              }
            }
          }
        }
      }
    }
    return grants;
  }

  private static List<PolicyRule> rules(
      List<HasMetadata> objects, String kind, String name, String namespace) {
    for (HasMetadata o : objects) {
      if (o instanceof ClusterRole r
          && kind.equals("ClusterRole")
          && name.equals(r.getMetadata().getName())) {
        return r.getRules();
      }
      if (o instanceof Role r
          && kind.equals("Role")
          && name.equals(r.getMetadata().getName())
          && namespace.equals(r.getMetadata().getNamespace())) {
        return r.getRules();
      }
    }
    throw new AssertionError(kind + " " + name + " is bound but not in the manifests");
  }

  @Test
  void everyCallWasGrantedAndEveryRuleWasNeeded(LocalInstall it) throws Exception {
    // The API server logs a watch once it ends (nothing is sent before the first event): stop
    // the processes, so that their informers' watches are in the log.
    for (String process : List.of("webhook", "provisioner")) {
      it.processes.stop(process);
    }
    List<AuditLog.Call> calls = AuditLog.calls(it);
    List<Grant> grants = grants(it);
    assertThat(calls).as("the audit log has this run's calls").isNotEmpty();
    TreeSet<String> refused = new TreeSet<>();
    int whileRestarting = 0;
    for (AuditLog.Call c : calls) {
      if (c.allowed()) {
        continue;
      }
      // A restarted API server refuses what RBAC allows until its caches are filled: not ours.
      if (KubeFaultsE2EIT.OUTAGES.stream().anyMatch(o -> o.covers(c.at()))) {
        whileRestarting++;
      } else {
        refused.add(c.user() + " was refused: " + c.describe());
      }
    }
    TreeSet<String> unneeded = new TreeSet<>();
    TreeSet<String> trusted = new TreeSet<>();
    for (Grant g : grants) {
      if (calls.stream().noneMatch(g::covers)) {
        String key = g.account() + " " + g.verb() + " " + g.resource();
        if (UNEXERCISED.containsKey(key)) {
          trusted.add(g.describe() + ": " + UNEXERCISED.get(key));
        } else {
          unneeded.add(g.describe());
        }
      }
    }
    System.out.printf(
        "RBAC audit: %d calls of this run, %d grants; %d refusals while the API server restarted"
            + " (not counted); %d granted on trust:%n  %s%n",
        calls.size(), grants.size(), whileRestarting, trusted.size(), String.join("\n  ", trusted));
    org.assertj.core.api.SoftAssertions.assertSoftly(
        soft -> {
          soft.assertThat(refused)
              .as("calls the manifests' RBAC refused (a rule is missing)")
              .isEmpty();
          soft.assertThat(unneeded).as("rules no call of the suite needed (grant less)").isEmpty();
        });
  }
}
