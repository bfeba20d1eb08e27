package org.standalonecinder.webhook.policy;

import java.time.Clock;
import java.util.List;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.webhook.admission.AdmissionController;
import org.standalonecinder.webhook.admission.Claim;
import org.standalonecinder.webhook.admission.Decision;
import org.standalonecinder.webhook.admission.ReviewRequest;

/**
 * The rules for claims that ask to be clones ({@code k8s.io/CloneRequest}, or a native {@code
 * spec.dataSource}/{@code dataSourceRef} naming a claim, into one of our classes) or claim to be
 * one ({@code k8s.io/CloneOf}). Every rule runs and every violation is reported in one answer; the
 * message says what to change. Default-deny where data could cross namespaces: a cross-namespace
 * source needs the requester to be allowed to create pods there (or an explicit grant on the
 * source), unless the admin chose otherwise.
 *
 * <p>Each rule is one {@link ClaimRule}; this class only runs them. The rules that read the request
 * alone run first, so that their violations are reported even when a lookup fails. Then, for claims
 * that are ours to judge ({@link ClaimReview#inScope()}), the rules that look things up, the Cinder
 * check last. A failed lookup denies the request (fail closed) after every rule has had its say.
 */
public final class ClonePolicy implements AdmissionController {

  public static final String CLONE_REQUEST = ClaimAnnotations.CLONE_REQUEST;
  public static final String CLONE_OF = ClaimAnnotations.CLONE_OF;

  /** On a source claim: namespaces (comma-separated) that may clone it. */
  public static final String CLONE_GRANT = ClaimAnnotations.CLONE_GRANT;

  /** Rule names: they label the metrics and are listed in docs/webhook.md. */
  public static final String RULE_SYNTAX = CloneRequestSyntaxRule.NAME;

  public static final String RULE_CLASS = CloneClassRule.NAME;
  public static final String RULE_DATA_SOURCE_KIND = DataSourceKindRule.NAME;
  public static final String RULE_TWO_SOURCES = TwoSourcesRule.NAME;
  public static final String RULE_SOURCE_MISSING = SourceMissingRule.NAME;
  public static final String RULE_SOURCE_DELETING = SourceDeletingRule.NAME;
  public static final String RULE_SOURCE_UNBOUND = SourceUnboundRule.NAME;
  public static final String RULE_SOURCE_FOREIGN = SourceForeignRule.NAME;
  public static final String RULE_VOLUME_MODE = VolumeModeRule.NAME;
  public static final String RULE_SIZE = CloneSizeRule.NAME;
  public static final String RULE_CROSS_NAMESPACE = CrossNamespaceRule.NAME;
  public static final String RULE_SOURCE_UNCHECKED = UncheckedSourceRule.NAME;
  public static final String RULE_CLONE_OF = CloneOfRule.NAME;
  public static final String RULE_IMMUTABLE = CloneRequestImmutableRule.NAME;
  public static final String RULE_DEFAULT_NAMESPACE = DefaultNamespaceRule.NAME;
  public static final String RULE_CINDER = CinderCheckRule.NAME;
  public static final String RULE_CHECK_UNAVAILABLE = CinderCheckRule.UNAVAILABLE_NAME;
  public static final String RULE_RBD_GROWTH = RbdGrowthRule.NAME;
  public static final String RULE_TOKEN = CloneTokenRule.NAME;
  public static final String RULE_ACCESS_MODE = SharedFilesystemRule.NAME;
  public static final String RULE_NAMESPACE = "claim-namespace";

  static final String VOLUME_ID = ClaimAnnotations.VOLUME_ID;
  static final String STORAGE_PROVISIONER = ClaimAnnotations.STORAGE_PROVISIONER;

  /**
   * @param provisionerName our provisioner's name
   * @param provisionerUser the provisioner's service account user, the only one who may set {@code
   *     k8s.io/CloneOf}
   * @param crossNamespace who may clone across namespaces
   * @param undersized what to do with a clone smaller than its source
   * @param checkUnavailable what to do when Cinder cannot be asked
   * @param requesters which requesters act for others, and which of those the admin trusts
   * @param caller whom the server authenticates as the sender of every review (the API server's
   *     client certificate), or null when it takes reviews from anyone who reaches its port: a
   *     review's {@code userInfo} is then only what its sender wrote, and a requester's own rights
   *     cannot allow a clone across namespaces
   */
  public record Settings(
      String provisionerName,
      String provisionerUser,
      CrossNamespaceRule.CrossNamespace crossNamespace,
      CloneSizeRule.Undersized undersized,
      CinderCheckRule.CheckUnavailable checkUnavailable,
      Requesters requesters,
      String caller) {

    public Settings {
      requesters = requesters == null ? Requesters.DEFAULT : requesters;
      caller = caller == null || caller.isEmpty() ? null : caller;
    }

    public Settings(
        String provisionerName,
        String provisionerUser,
        CrossNamespaceRule.CrossNamespace cross,
        CloneSizeRule.Undersized undersized,
        CinderCheckRule.CheckUnavailable checkUnavailable,
        Requesters requesters) {
      this(provisionerName, provisionerUser, cross, undersized, checkUnavailable, requesters, null);
    }

    /** The same, with every review's sender authenticated as {@code caller}. */
    public Settings callerAuthenticatedAs(String caller) {
      return new Settings(
          provisionerName,
          provisionerUser,
          crossNamespace,
          undersized,
          checkUnavailable,
          requesters,
          caller);
    }

    /** Whether every review's sender is authenticated, so its userInfo is the API server's. */
    public boolean callerAuthenticated() {
      return caller != null;
    }

    public Settings(
        String provisionerName,
        String provisionerUser,
        CrossNamespaceRule.CrossNamespace cross,
        CloneSizeRule.Undersized undersized,
        CinderCheckRule.CheckUnavailable checkUnavailable) {
      this(provisionerName, provisionerUser, cross, undersized, checkUnavailable, null);
    }

    public Settings(
        String provisionerName, String provisionerUser, CrossNamespaceRule.CrossNamespace cross) {
      this(
          provisionerName,
          provisionerUser,
          cross,
          CloneSizeRule.Undersized.DENY,
          CinderCheckRule.CheckUnavailable.DENY);
    }

    public Settings(
        String provisionerName,
        String provisionerUser,
        CrossNamespaceRule.CrossNamespace cross,
        CloneSizeRule.Undersized undersized) {
      this(
          provisionerName,
          provisionerUser,
          cross,
          undersized,
          CinderCheckRule.CheckUnavailable.DENY);
    }
  }

  private final Settings settings;
  private final ClusterView cluster;
  private final List<ClaimRule> readingRequest;
  private final List<ClaimRule> lookingUp;

  /** The one rule an update that grows a claim and breaks no other rule asks. */
  private static final ClaimRule GROWTH = new RbdGrowthRule();

  /** Without a Cinder check and without clone tokens. */
  public ClonePolicy(Settings settings, ClusterView cluster) {
    this(settings, cluster, CloneCheck.NONE, null, Clock.systemUTC());
  }

  /**
   * @param check asked by the validating endpoint once every other rule passed
   * @param tokenKeys sign the token of accepted cross-namespace clones ({@link
   *     org.standalonecinder.api.CloneToken}); null for none (the provisioner then refuses
   *     cross-namespace clones)
   */
  public ClonePolicy(
      Settings settings,
      ClusterView cluster,
      CloneCheck check,
      org.standalonecinder.api.CloneToken.Keys tokenKeys,
      Clock clock) {
    this.settings = settings;
    this.cluster = cluster;
    // The order is the order of the violations in a denial, and the rules that act only on a
    // clean request (namespace default, token, Cinder) come after every rule that can deny.
    List<ClaimRule> rules =
        List.of(
            new CloneOfRule(),
            new CloneRequestImmutableRule(),
            new SharedFilesystemRule(),
            new CloneRequestSyntaxRule(),
            new DataSourceKindRule(),
            new TwoSourcesRule(),
            new CloneClassRule(),
            new CrossNamespaceRule(),
            new UncheckedSourceRule(),
            new SourceMissingRule(),
            new SourceDeletingRule(),
            new SourceUnboundRule(),
            new SourceForeignRule(),
            new VolumeModeRule(),
            new CloneSizeRule(),
            GROWTH,
            new DefaultNamespaceRule(),
            new CloneTokenRule(tokenKeys, clock),
            new CinderCheckRule(check));
    this.readingRequest = rules.stream().filter(ClaimRule::readsRequestOnly).toList();
    this.lookingUp = rules.stream().filter(r -> !r.readsRequestOnly()).toList();
  }

  @Override
  public Decision review(ReviewRequest request, boolean mutating) {
    Claim claim = request.claim();
    if (claim == null || "DELETE".equals(request.operation())) {
      return Decision.allow();
    }
    ClaimReview review = new ClaimReview(settings, cluster, request, claim, mutating);
    if (!review.isUpdate() && review.plain()) {
      // A plain claim needs no lookup: an API server hiccup must not block ordinary claims.
      return Decision.allow();
    }
    if (review.namespace == null || review.namespace.isEmpty()) {
      // The API server always names it; without it no source can be resolved nor judged.
      return Decision.deny(
          400,
          RULE_NAMESPACE,
          "the request names no namespace for this claim; it cannot be judged");
    }
    Findings findings = new Findings(mutating);
    run(readingRequest, review, findings);
    // An update only costs a lookup when it would be denied or grows the claim: most updates
    // touch none of this. A growth asks only whether the volume can grow: the clone rules judged
    // the claim when it was created, and its source may be long gone.
    boolean onlyGrowth = review.isUpdate() && findings.isEmpty();
    if (onlyGrowth && !review.grows()) {
      return Decision.allow();
    }
    try {
      if (!review.inScope()) {
        return Decision.allow();
      }
    } catch (LookupFailedException e) {
      findings.lookupFailed(e);
      return findings.decision();
    }
    run(onlyGrowth ? List.of(GROWTH) : lookingUp, review, findings);
    return findings.decision();
  }

  private static void run(List<ClaimRule> rules, ClaimReview review, Findings findings) {
    for (ClaimRule rule : rules) {
      try {
        rule.check(review, findings);
      } catch (LookupFailedException e) {
        // The other rules still run: their violations are worth reporting now.
        findings.lookupFailed(e);
      }
    }
  }
}
