package org.standalonecinder.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.api.CloneToken;
import org.standalonecinder.demo.Claims;
import org.standalonecinder.demo.Kubectl;
import org.standalonecinder.demo.LocalInstall;
import org.standalonecinder.demo.Waits;
import org.standalonecinder.provisioner.provision.Names;

/**
 * The clone policy tried as a tenant would get around it, on the real control plane: mallory has
 * {@code edit} in {@code attacker} only and no right at all in {@code victim}, whose claim {@code
 * db} holds data. Each test is one way around the rule, and shows that no clone of {@code
 * victim/db} lands in {@code attacker} (and that the tenant is told why).
 */
@ExtendWith(Installed.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Order(3)
class CloneAttacksE2EIT {

  private static final ObjectMapper JSON = new ObjectMapper();
  static final String WFFC_CLASS =
      """
      apiVersion: storage.k8s.io/v1
      kind: StorageClass
      metadata: {name: e2e-later}
      provisioner: openstack.org/standalone-cinder
      parameters: {fsType: ext4, smartclone: "true"}
      reclaimPolicy: Delete
      volumeBindingMode: WaitForFirstConsumer
      """;
  private static final String NODE = "e2e-attacks-node";

  private LocalInstall it;
  private String victim;
  private String attacker;

  @BeforeAll
  void victimAndAttacker(LocalInstall installation) {
    it = installation;
    it.kubectl.ok(ClaimLifecycleE2EIT.CLASSES, "apply", "-f", "-");
    it.kubectl.ok(WFFC_CLASS, "apply", "-f", "-");
    victim = it.namespace("e2e-victim");
    attacker = it.namespace("e2e-attacker");
    it.kubectl.ok(Claims.yaml(victim, "db", "e2e-cinder", ""), "apply", "-f", "-");
    it.claims.bound(victim, "db");
    malloryEdits(attacker);
    Waits.await(
        "mallory's RBAC in force",
        () ->
            it.kubectl
                .run(
                    null, "auth", "can-i", "create", "statefulsets", "-n", attacker, "--as=mallory")
                .ok(),
        Duration.ofSeconds(10));
    assertThat(
            it.kubectl
                .run(null, "auth", "can-i", "create", "pods", "-n", victim, "--as=mallory")
                .ok())
        .as("mallory has no right in victim")
        .isFalse();
    it.admin
        .nodes()
        .resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build())
        .createOr(n -> n.update());
  }

  /** Mallory gets {@code edit} in the namespace: claims, StatefulSets, pods, and no more. */
  private void malloryEdits(String ns) {
    it.kubectl.ok(
        null,
        "create",
        "rolebinding",
        "mallory-edit",
        "-n",
        ns,
        "--clusterrole=edit",
        "--user=mallory");
  }

  @AfterAll
  void deleteTheNode() {
    it.admin.nodes().withName(NODE).delete();
  }

  private Kubectl.Result asMallory(String yaml, String... args) {
    String[] all = new String[args.length + 1];
    System.arraycopy(args, 0, all, 0, args.length);
    all[args.length] = "--as=mallory";
    return it.kubectl.run(yaml, all);
  }

  private List<String> events(String ns, String name) {
    return it.admin.events().v1().events().inNamespace(ns).list().getItems().stream()
        .filter(e -> name.equals(e.getRegarding().getName()))
        .map(e -> e.getReason() + ": " + e.getNote())
        .toList();
  }

  /** Core events (the statefulset controller records through the core API). */
  private List<String> coreEvents(String ns, String name) {
    return it.admin.v1().events().inNamespace(ns).list().getItems().stream()
        .filter(e -> name.equals(e.getInvolvedObject().getName()))
        .map(e -> e.getReason() + ": " + e.getMessage())
        .toList();
  }

  private boolean anyCloneOfTheVictim() {
    return it.admin.persistentVolumes().list().getItems().stream()
        .anyMatch(
            pv ->
                pv.getMetadata().getAnnotations() != null
                    && (victim + "/db")
                        .equals(pv.getMetadata().getAnnotations().get(Names.ANN_CLONE_OF)));
  }

  /**
   * The deputy: mallory may create StatefulSets, and the statefulset controller, which creates
   * their claims, may create pods in every namespace. Its own rights must not count for her: she is
   * told so when she creates the StatefulSet, and, were that check out of the way, the controller's
   * claim is refused.
   */
  @Test
  @Order(1)
  void aStatefulSetCannotCloneAnotherNamespaceForItsOwner() throws Exception {
    // Who creates the claim is judged only where the webhook knows the API server sent the
    // review; elsewhere the provisioner refuses the clone (no grant, no token), as the next tests
    // show.
    withCallerAuthentication(this::theControllersClaimIsRefused);
  }

  /** A check run while the webhook takes reviews from the API server only (--client-ca). */
  private void withCallerAuthentication(Check check) throws Exception {
    it.webhookAuthenticatesCallers(true);
    try {
      check.run();
    } finally {
      it.webhookAuthenticatesCallers(false);
    }
  }

  private interface Check {
    void run() throws Exception;
  }

  private void theControllersClaimIsRefused() throws Exception {
    String sts =
        """
        apiVersion: apps/v1
        kind: StatefulSet
        metadata: {name: thief, namespace: %s}
        spec:
          serviceName: thief
          replicas: 1
          selector: {matchLabels: {app: thief}}
          template:
            metadata: {labels: {app: thief}}
            spec:
              containers: [{name: c, image: example.invalid/none}]
          volumeClaimTemplates:
            - metadata:
                name: data
                annotations: {k8s.io/CloneRequest: %s/db}
              spec:
                storageClassName: e2e-cinder
                accessModes: [ReadWriteOnce]
                resources: {requests: {storage: 1Gi}}
        """
            .formatted(attacker, victim);
    // Told at kubectl apply: the claims would be the controller's, and it may not clone for her.
    Kubectl.Result early = asMallory(sts, "create", "-f", "-");
    assertThat(early.ok()).as(early.toString()).isFalse();
    assertThat(early.err())
        .contains(
            "admission webhook \"statefulsets.webhook.standalone-cinder.io\" denied the request:"
                + " volumeClaimTemplates data: the statefulset controller's claims would be refused:"
                + " cloning "
                + victim
                + "/db into namespace "
                + attacker
                + " is not allowed");
    // That word is a convenience (its entry lets StatefulSets through when the webhook is down):
    // without it, the claim rule still holds when the controller creates the claim.
    var configs = it.admin.admissionRegistration().v1().validatingWebhookConfigurations();
    String entry = "statefulsets.webhook.standalone-cinder.io";
    var removed =
        configs.withName("standalone-cinder").get().getWebhooks().stream()
            .filter(w -> w.getName().equals(entry))
            .findFirst()
            .orElseThrow();
    configs
        .withName("standalone-cinder")
        .edit(
            c -> {
              c.getWebhooks().removeIf(w -> w.getName().equals(entry));
              return c;
            });
    try {
      Waits.await(
          "the API server without the StatefulSet entry",
          () -> asMallory(sts, "create", "--dry-run=server", "-f", "-").ok(),
          Duration.ofSeconds(30));
      Kubectl.Result r = asMallory(sts, "create", "-f", "-");
      assertThat(r.ok()).as(r.toString()).isTrue();
    } finally {
      configs
          .withName("standalone-cinder")
          .edit(
              c -> {
                c.getWebhooks().add(removed);
                return c;
              });
    }
    Waits.await(
        "the statefulset controller told no",
        () -> coreEvents(attacker, "thief").stream().anyMatch(e -> e.startsWith("FailedCreate")),
        Duration.ofSeconds(60));
    assertThat(coreEvents(attacker, "thief"))
        .anyMatch(
            e ->
                e.contains(
                        "cloning " + victim + "/db into namespace " + attacker + " is not allowed")
                    && e.contains(
                        "system:serviceaccount:kube-system:statefulset-controller, a controller"
                            + " acting for someone else"));
    assertThat(
            it.admin.persistentVolumeClaims().inNamespace(attacker).withName("data-thief-0").get())
        .as("no claim was made")
        .isNull();
    assertThat(anyCloneOfTheVictim()).isFalse();
    it.kubectl.ok(null, "delete", "statefulset", "thief", "-n", attacker, "--wait=false");
  }

  /**
   * The forged review: mallory posts an AdmissionReview she wrote, claiming system:masters, to the
   * webhook's port. The webhook (which authenticates nobody here) does not take the rights of whom
   * the review names, nor looks at the source: no token. A webhook before it did sign one, and such
   * a token is what she brings: where her claim is admitted without a denial (audit mode; a
   * namespace the policy exempts) it is admitted without her token, and the provisioner refuses the
   * clone; nor can she add the token afterwards.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "audit mode | mode: enforce | mode: audit",
        "an exempt namespace | crossNamespace: authorized | crossNamespace: authorized\\n"
            + "exemptNamespaces: {matchLabels: {e2e-exempt: \"true\"}}"
      })
  @Order(2)
  void aTokenFromAForgedReviewDoesNotClone(String name, String replace, String with)
      throws Exception {
    boolean exempt = name.contains("exempt");
    String ns = attacker;
    if (exempt) {
      ns = it.namespace("e2e-sandbox");
      it.kubectl.ok(null, "label", "namespace", ns, "e2e-exempt=true");
      malloryEdits(ns);
    }
    String wanted =
        Claims.yaml(ns, "forged", "e2e-cinder", "k8s.io/CloneRequest: " + victim + "/db");
    assertForgedReviewGetsNoToken(ns, wanted);
    String token = oldWebhooksToken(ns, "forged");
    String withToken =
        Claims.yaml(
            ns,
            "forged",
            "e2e-cinder",
            "k8s.io/CloneRequest: " + victim + "/db, standalone-cinder.io/clone-token: " + token);
    String before = Files.readString(it.policyFile);
    assertThat(before).contains(replace);
    try {
      Files.writeString(it.policyFile, before.replace(replace, with.replace("\\n", "\n")));
      Waits.await(
          name + " in force",
          () -> asMallory(wanted, "create", "--dry-run=server", "-f", "-").ok(),
          Duration.ofSeconds(30));
      Kubectl.Result admitted = asMallory(withToken, "create", "-f", "-");
      assertThat(admitted.ok()).as(admitted.toString()).isTrue();
      assertThat(admitted.err()).contains("standalone-cinder.io/clone-token given was removed");
    } finally {
      Files.writeString(it.policyFile, before);
    }
    PersistentVolumeClaim stored =
        it.admin.persistentVolumeClaims().inNamespace(ns).withName("forged").get();
    assertThat(stored.getMetadata().getAnnotations())
        .as("her token was not stored")
        .doesNotContainKey("standalone-cinder.io/clone-token");
    String in = ns;
    Waits.await(
        "the provisioner's refusal",
        () ->
            events(in, "forged").stream()
                .anyMatch(
                    e ->
                        e.startsWith("ProvisioningFailed")
                            && e.contains("the claim carries no standalone-cinder.io/clone-token")),
        Duration.ofSeconds(30));
    assertThat(anyCloneOfTheVictim()).isFalse();
    // Nor can she add it afterwards, whatever the mode: the policy is back to enforce, and the
    // token guard stands outside modes and exemptions anyway.
    Kubectl.Result added =
        asMallory(
            null,
            "annotate",
            "pvc",
            "forged",
            "-n",
            ns,
            "standalone-cinder.io/clone-token=" + token);
    assertThat(added.ok()).as(added.toString()).isFalse();
    assertThat(added.err())
        .contains("standalone-cinder.io/clone-token cannot be added, changed or removed");
    it.kubectl.ok(null, "delete", "pvc", "forged", "-n", ns, "--wait=false");
  }

  /**
   * The cure for forged reviews where the cluster allows it: the API server presents a client
   * certificate to webhooks (dev/kube-local gives it one through its AdmissionConfiguration), and
   * the webhook, started with {@code --client-ca}, takes reviews only from it. Mallory's review is
   * refused before it is read; the API server's reviews go on, and kubectl is still told why a
   * clone is denied.
   */
  @Test
  @Order(3)
  void withClientCertificatesRequiredAForgedReviewIsRefusedAndTheApiServerStillJudged()
      throws Exception {
    String wanted =
        Claims.yaml(
            attacker, "forged-mtls", "e2e-cinder", "k8s.io/CloneRequest: " + victim + "/db");
    it.processes.stop("webhook");
    try {
      it.processes.restart(
          "webhook",
          List.of(
              "--client-ca",
              it.kubeEnv.get("KUBE_LOCAL_WEBHOOK_CLIENT_CA"),
              "--client-name",
              it.kubeEnv.get("KUBE_LOCAL_WEBHOOK_CLIENT_NAME")));
      it.awaitWebhook();
      HttpResponse<String> forged = post(review(attacker, wanted));
      assertThat(forged.statusCode()).as(forged.body()).isEqualTo(401);
      assertThat(forged.body()).contains("reviews are taken from the API server only");
      Kubectl.Result denied = asMallory(wanted, "create", "-f", "-");
      assertThat(denied.ok()).as(denied.toString()).isFalse();
      assertThat(denied.err())
          .contains("cloning " + victim + "/db into namespace " + attacker + " is not allowed");
    } finally {
      it.processes.stop("webhook");
      it.processes.restart("webhook");
      it.awaitWebhook();
    }
  }

  /** A review of mallory's claim that claims to come from an admin in system:masters. */
  private String review(String namespace, String claimYaml) throws Exception {
    JsonNode claim =
        JSON.valueToTree(
            it.admin
                .getKubernetesSerialization()
                .unmarshal(claimYaml, PersistentVolumeClaim.class));
    return JSON.writeValueAsString(
        JSON.createObjectNode()
            .put("apiVersion", "admission.k8s.io/v1")
            .put("kind", "AdmissionReview")
            .set(
                "request",
                JSON.createObjectNode()
                    .put("uid", "forged-1")
                    .put("namespace", namespace)
                    .put("operation", "CREATE")
                    .<com.fasterxml.jackson.databind.node.ObjectNode>set(
                        "kind",
                        JSON.createObjectNode()
                            .put("group", "")
                            .put("version", "v1")
                            .put("kind", "PersistentVolumeClaim"))
                    .<com.fasterxml.jackson.databind.node.ObjectNode>set(
                        "userInfo",
                        JSON.createObjectNode()
                            .put("username", "admin")
                            .set("groups", JSON.createArrayNode().add("system:masters")))
                    .set("object", claim)));
  }

  /** POSTs a review to the webhook's /mutate, as anyone who reaches its port can. */
  private HttpResponse<String> post(String review) throws Exception {
    return HttpClient.newBuilder()
        .sslContext(CaRotationE2EIT.bundle(it).clientContext())
        .build()
        .send(
            HttpRequest.newBuilder(
                    URI.create("https://127.0.0.1:" + LocalInstall.WEBHOOK_PORT + "/mutate"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(review))
                .build(),
            HttpResponse.BodyHandlers.ofString());
  }

  /**
   * What the webhook's port answers anyone who reaches it with a review of their own making: no
   * token, and nothing decided on the source or the requester it names (the webhook, which does not
   * authenticate its callers, leaves both to the provisioner); in a namespace the policy exempts,
   * no judgement at all, and no token either.
   */
  private void assertForgedReviewGetsNoToken(String namespace, String claimYaml) throws Exception {
    HttpResponse<String> r = post(review(namespace, claimYaml));
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    JsonNode answer = JSON.readTree(r.body()).path("response");
    assertThat(answer.path("patch").isMissingNode()).as("no token: " + r.body()).isTrue();
    assertThat(answer.path("allowed").asBoolean()).as(r.body()).isTrue();
  }

  private PersistentVolumeClaim victimDb() {
    return it.admin.persistentVolumeClaims().inNamespace(victim).withName("db").get();
  }

  /**
   * The token a webhook that authenticated nobody signed, before this check, for mallory's forged
   * review: the cluster's key, the requester's rights as basis, system:masters as requester.
   */
  private String oldWebhooksToken(String namespace, String name) {
    byte[] key =
        Base64.getDecoder()
            .decode(
                it.admin
                    .secrets()
                    .inNamespace(LocalInstall.NS)
                    .withName(CloneToken.KEY_SECRET)
                    .get()
                    .getData()
                    .get(CloneToken.KEY_FIELD));
    Instant now = Instant.now();
    String v3 =
        CloneToken.sign(
            new CloneToken.Claims(
                new ClaimRef(victim, "db"),
                victimDb().getMetadata().getUid(),
                new ClaimRef(namespace, name),
                now.minusSeconds(2),
                now.plus(CloneToken.VALIDITY),
                CloneToken.Basis.REQUESTER,
                new CloneToken.Principal("admin", null, List.of("system:masters"), null)),
            CloneToken.Keys.of(key, null));
    // In that webhook's own format (v2: the same fields, without the caller), signed again.
    String payload =
        new String(Base64.getUrlDecoder().decode(v3.split("\\.")[0]), StandardCharsets.UTF_8);
    byte[] v2 =
        ("v2" + payload.substring(2, payload.lastIndexOf('|'))).getBytes(StandardCharsets.UTF_8);
    try {
      javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
      mac.init(new javax.crypto.spec.SecretKeySpec(key, "HmacSHA256"));
      Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
      return b64.encodeToString(v2) + "." + b64.encodeToString(mac.doFinal(v2));
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * The attack: the token slipped in by an update the webhook never judged. The claim-updates entry
   * lets updates through when the webhook does not answer (failurePolicy Ignore, so that binds and
   * finalizers never wait on it): stopped, answering 429 or 500, or sent a review larger than it
   * reads (an update carries the claim twice, and the API server writes each {@code <} of an
   * annotation as six bytes). Either way the provisioner does not clone on a token whose requester
   * nobody authenticated, and says so on the claim.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "the webhook stopped, stopped",
    "an update too large for the webhook (413), large",
    "the webhook answering too busy (429), 429",
    "the webhook failing (500), 500"
  })
  @Order(5)
  void aTokenSlippedInByAnUpdateTheWebhookDidNotJudgeDoesNotClone(String name, String how)
      throws Exception {
    String claim = "slipped-" + how;
    assertThat(victimDb().getMetadata().getAnnotations())
        .as("the source grants nothing")
        .doesNotContainKey("standalone-cinder.io/clone-grant");
    String token = oldWebhooksToken(attacker, claim);
    String padding =
        "large".equals(how)
            ? "e2e-padding: \"" + "<".repeat(200 * 1024) + "\""
            : "e2e-padding: none";
    Kubectl.Result created =
        asMallory(Claims.yaml(attacker, claim, "e2e-later", padding), "create", "-f", "-");
    assertThat(created.ok()).as(created.toString()).isTrue();
    if ("large".equals(how)) {
      // Labels, written as they are, on top: two copies of the claim then pass 3 MiB.
      java.util.Map<String, String> labels = new java.util.HashMap<>();
      for (int i = 0; i < 10_000; i++) {
        labels.put("pad-" + i, "x".repeat(60));
      }
      it.admin
          .persistentVolumeClaims()
          .inNamespace(attacker)
          .withName(claim)
          .edit(
              c -> {
                c.getMetadata().setLabels(labels);
                return c;
              });
    }
    io.vertx.core.Vertx standIn = null;
    if (!"large".equals(how)) {
      it.processes.stop("webhook");
      if (!"stopped".equals(how)) {
        standIn = answeringOnly(Integer.parseInt(how));
      }
    }
    Kubectl.Result slipped;
    try {
      slipped =
          asMallory(
              null,
              "annotate",
              "pvc",
              claim,
              "-n",
              attacker,
              "k8s.io/CloneRequest=" + victim + "/db",
              "standalone-cinder.io/clone-token=" + token);
    } finally {
      if (standIn != null) {
        standIn.close().toCompletionStage().toCompletableFuture().get();
      }
      if (!"large".equals(how)) {
        it.processes.restart("webhook");
        it.awaitWebhook();
      }
    }
    assertThat(slipped.ok()).as("the update went through: " + slipped).isTrue();
    select(attacker, claim);
    Waits.await(
        "the provisioner's refusal",
        () ->
            events(attacker, claim).stream()
                .anyMatch(
                    e ->
                        e.startsWith("ProvisioningFailed")
                            && e.contains(
                                "a review whose sender the webhook did not authenticate")),
        Duration.ofSeconds(60));
    assertThat(anyCloneOfTheVictim()).isFalse();
    it.kubectl.ok(null, "delete", "pvc", claim, "-n", attacker, "--wait=false");
  }

  /**
   * In the webhook's place, on its port and with a serving certificate of its CA (so that the API
   * server trusts it): a server that answers every request with {@code status}, as an overloaded or
   * broken webhook would.
   */
  private io.vertx.core.Vertx answeringOnly(int status) throws Exception {
    var secret =
        it.admin
            .secrets()
            .inNamespace(LocalInstall.NS)
            .withName("standalone-cinder-webhook-ca")
            .get();
    var ca =
        org.standalonecinder.certs.CertificateAuthority.fromPem(
            new String(
                Base64.getDecoder().decode(secret.getData().get("tls.crt")),
                StandardCharsets.UTF_8),
            new String(
                Base64.getDecoder().decode(secret.getData().get("tls.key")),
                StandardCharsets.UTF_8));
    var serving =
        ca.issueServing(
            List.of(), List.of("127.0.0.1"), Duration.ofHours(1), java.time.Clock.systemUTC());
    io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
    vertx
        .createHttpServer(
            new io.vertx.core.http.HttpServerOptions()
                .setSsl(true)
                .setUseAlpn(true)
                .setKeyCertOptions(
                    new io.vertx.core.net.PemKeyCertOptions()
                        .addCertValue(io.vertx.core.buffer.Buffer.buffer(serving.chainPem()))
                        .addKeyValue(io.vertx.core.buffer.Buffer.buffer(serving.keyPem()))))
        .requestHandler(
            r -> {
              r.response().setStatusCode(status);
              if (status == 429) {
                r.response().putHeader("Retry-After", "1");
              }
              r.response().end("a stand-in for the webhook answering " + status + "\n");
            })
        .listen(LocalInstall.WEBHOOK_PORT, "127.0.0.1")
        .toCompletionStage()
        .toCompletableFuture()
        .get();
    return vertx;
  }

  /**
   * Consent checked once, long before the copy: a WaitForFirstConsumer clone admitted under the
   * source's grant, with the token of a webhook that judged it (--client-ca), waits for a node;
   * meanwhile the owner takes the grant back, or deletes the source and makes a new claim of that
   * name. When the node is selected, nothing is cloned. (Without caller authentication there is no
   * token: the grant as it is at clone time is all, as AdmissionE2EIT shows.)
   */
  @Test
  @Order(4)
  void consentWithdrawnBeforeAWaitingCloneIsMadeStopsIt() throws Exception {
    withCallerAuthentication(this::consentIsAskedAgainWhenTheCloneIsMade);
  }

  private void consentIsAskedAgainWhenTheCloneIsMade() throws Exception {
    it.kubectl.ok(
        null,
        "annotate",
        "pvc",
        "db",
        "-n",
        victim,
        "standalone-cinder.io/clone-grant=" + attacker);
    String clone = "k8s.io/CloneRequest: " + victim + "/db";
    for (String name : List.of("after-revoke", "after-recreate")) {
      Kubectl.Result r =
          asMallory(Claims.yaml(attacker, name, "e2e-later", clone), "create", "-f", "-");
      assertThat(r.ok()).as("admitted under the grant: " + r).isTrue();
    }
    // The owner takes the grant back; the scheduler then picks a node for the first claim.
    it.kubectl.ok(null, "annotate", "pvc", "db", "-n", victim, "standalone-cinder.io/clone-grant-");
    select(attacker, "after-revoke");
    Waits.await(
        "refused at clone time",
        () ->
            events(attacker, "after-revoke").stream()
                .anyMatch(
                    e ->
                        e.startsWith("ProvisioningFailed")
                            && e.contains("the source no longer grants the clone to " + attacker)),
        Duration.ofSeconds(60));

    // The owner deletes db and makes a new claim of that name (new data), granting nothing. (Had
    // they granted again, that would be consent to the new data, read when the clone is made.)
    it.kubectl.ok(null, "delete", "pvc", "db", "-n", victim, "--timeout=120s");
    it.kubectl.ok(Claims.yaml(victim, "db", "e2e-cinder", ""), "apply", "-f", "-");
    it.claims.bound(victim, "db");
    select(attacker, "after-recreate");
    Waits.await(
        "refused at clone time",
        () ->
            events(attacker, "after-recreate").stream()
                .anyMatch(
                    e ->
                        e.startsWith("ProvisioningFailed")
                            && e.contains("the source claim is not the one admitted")),
        Duration.ofSeconds(60));
    assertThat(anyCloneOfTheVictim()).isFalse();
    for (String name : List.of("after-revoke", "after-recreate")) {
      assertThat(
              it.admin
                  .persistentVolumes()
                  .withName(
                      Names.pvName(
                          it.admin
                              .persistentVolumeClaims()
                              .inNamespace(attacker)
                              .withName(name)
                              .get()
                              .getMetadata()
                              .getUid()))
                  .get())
          .isNull();
      it.kubectl.ok(null, "delete", "pvc", name, "-n", attacker, "--wait=false");
    }
  }

  /** What kube-scheduler writes on a claim once it has chosen the node of the claim's pod. */
  private void select(String ns, String claim) {
    TopologyE2EIT.select(it, ns, claim, NODE);
  }
}
