package org.standalonecinder.provisioner.plugin;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.standalonecinder.api.ClaimAnnotations;
import org.standalonecinder.api.ClaimRef;
import org.standalonecinder.api.CloneRequest;
import org.standalonecinder.provisioner.clone.CloneMarking;
import org.standalonecinder.provisioner.clone.CloneResolver;
import org.standalonecinder.provisioner.clone.SourceProtection;
import org.standalonecinder.provisioner.controller.ClusterCache;
import org.standalonecinder.provisioner.controller.ProvisionRequest;
import org.standalonecinder.provisioner.controller.ProvisionResult;
import org.standalonecinder.provisioner.controller.Provisioner;
import org.standalonecinder.provisioner.controller.ProvisioningException;
import org.standalonecinder.provisioner.controller.WorkKey;
import org.standalonecinder.provisioner.expansion.ClaimExpansion;
import org.standalonecinder.provisioner.provision.AlreadyProvisioned;
import org.standalonecinder.provisioner.provision.Names;
import org.standalonecinder.provisioner.provision.ProvisionerSettings;
import org.standalonecinder.provisioner.provision.StillMaking;
import org.standalonecinder.provisioner.provision.VolumeProvisioner;
import org.standalonecinder.provisioner.provision.VolumeSource;
import org.standalonecinder.provisioner.snapshot.RestoreResolver;

/**
 * The Cinder plug-in of the claim loop: a blank volume or a clone of another claim's, exported to
 * the cluster, its PV, its expansion and its teardown. It orchestrates; each part lives in its own
 * place: the clone request and its source ({@link CloneResolver}, {@link SourceProtection}, {@link
 * CloneMarking}), the volume, its export and its PV ({@link VolumeProvisioner}), growing ({@link
 * ClaimExpansion}).
 */
public final class CinderProvisioner implements Provisioner {

  private static final Logger LOG = LoggerFactory.getLogger(CinderProvisioner.class);

  private final KubernetesClient client;
  private final ClusterCache cache;
  private final VolumeProvisioner volumes;
  private final ProvisionerSettings settings;
  private final CloneResolver clones;
  private final SourceProtection protection;
  private final CloneMarking marking;
  private final ClaimExpansion expansion;
  private final RestoreResolver restores;

  private final Housekeeping housekeeping;

  public CinderProvisioner(
      KubernetesClient client,
      ClusterCache cache,
      VolumeProvisioner volumes,
      CloneResolver clones,
      ClaimExpansion expansion,
      ProvisionerSettings settings) {
    this(client, cache, volumes, clones, null, expansion, settings);
  }

  /**
   * @param restores resolves the VolumeSnapshots claims are restored from; null: restores are
   *     refused
   */
  public CinderProvisioner(
      KubernetesClient client,
      ClusterCache cache,
      VolumeProvisioner volumes,
      CloneResolver clones,
      RestoreResolver restores,
      ClaimExpansion expansion,
      ProvisionerSettings settings) {
    this.restores = restores;
    this.client = client;
    this.cache = cache;
    this.volumes = volumes;
    this.settings = settings;
    this.clones = clones;
    this.protection = new SourceProtection(client, cache);
    this.marking = new CloneMarking(client, cache);
    this.expansion = expansion;
    this.housekeeping = new Housekeeping(client, cache, volumes, settings, protection);
  }

  @Override
  public String name() {
    return settings.provisionerName();
  }

  @Override
  public String kind(PersistentVolumeClaim claim) {
    Map<String, String> ann = claim.getMetadata().getAnnotations();
    var ds =
        claim.getSpec().getDataSourceRef() != null
            ? claim.getSpec().getDataSourceRef().getKind()
            : claim.getSpec().getDataSource() != null
                ? claim.getSpec().getDataSource().getKind()
                : null;
    if (CloneRequest.SNAPSHOT_KIND.equals(ds)) {
      return "restore";
    }
    boolean asked = (ann != null && ann.containsKey(ClaimAnnotations.CLONE_REQUEST)) || ds != null;
    return asked ? "clone" : "blank";
  }

  /**
   * A clone request that cannot work is refused before anything is made: a class without smartclone
   * must never turn a clone request into a blank volume. The source is protected while Cinder
   * copies it.
   */
  @Override
  public ProvisionResult provision(ProvisionRequest request) {
    PersistentVolumeClaim claim = request.claim();
    CloneRequest asked = CloneResolver.read(claim);
    if (asked.populator() != null) {
      // A volume populator fills it (it makes a claim of its own of this class, which is ours):
      // a blank volume here would take the claim from it.
      return ProvisionResult.ignored("its data source " + asked.populator() + " is a populator's");
    }
    Optional<ClaimRef> cloneOf =
        Optional.ofNullable(asked.dataSource() != null ? asked.dataSource() : asked.annotated());
    if (asked.snapshot() != null || cloneOf.isPresent()) {
      // Room first: a copy that must wait for it costs Cinder and the API server nothing.
      try {
        volumes.reserveCopy(claim);
      } catch (StillMaking waiting) {
        return ProvisionResult.inBackground(waiting.getMessage(), waiting.progress());
      }
    }
    if (asked.snapshot() != null) {
      return restore(request, asked.snapshot());
    }
    if (cloneOf.isEmpty()) {
      request.starting("");
      return made(request, null);
    }
    return clone(request, cloneOf.get());
  }

  /**
   * A clone: its source is resolved and checked at every look, and protected (its finalizer) while
   * Cinder copies it. A failure lets the source go, unless Cinder may still be filling the clone's
   * volume and the failure may pass (a 503 in the middle of an hours-long copy).
   */
  private ProvisionResult clone(ProvisionRequest request, ClaimRef from) {
    PersistentVolumeClaim claim = request.claim();
    String uid = claim.getMetadata().getUid();
    boolean keep = false;
    boolean mayPass = true;
    try {
      String judged = clones.verifyToken(claim, from);
      VolumeSource.Clone source = clones.resolve(from, claim, request.storageClass(), judged);
      protection.protect(from, source.claimUid(), uid);
      request.starting(
          " as a clone of " + source.claim() + " (Cinder volume " + source.volumeId() + ")");
      ProvisionResult result = made(request, source);
      // Cinder copies the source: it stays protected until the copy is done.
      keep = result.state() == ProvisionResult.State.IN_BACKGROUND;
      return result;
    } catch (ProvisioningException e) {
      mayPass = !e.isFinal();
      throw e;
    } finally {
      if (!keep && !(mayPass && volumes.copyInFlight(uid))) {
        // Made, or failed: a retry protects the source again before it clones.
        protection.unprotect(from, uid);
      }
    }
  }

  /** The claim's volume, made (or found) from {@code source}, or from nothing. */
  private ProvisionResult made(ProvisionRequest request, VolumeSource source) {
    PersistentVolume pv;
    try {
      pv =
          volumes.provision(
              request.claim(),
              request.storageClass(),
              source,
              request.nodeLabels(),
              name -> cache.volumeNow(name) != null);
    } catch (AlreadyProvisioned made) {
      // The loop's cache had not seen the PV yet: the binder takes it from here.
      return ProvisionResult.noChange(made.getMessage());
    } catch (StillMaking copying) {
      return ProvisionResult.inBackground(copying.getMessage(), copying.progress());
    }
    return ProvisionResult.finished(
        pv,
        " (Cinder volume "
            + pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID)
            + ")"
            + (source == null
                ? ""
                : source.restore() ? ", " + source.describe() : ", a clone of " + source.claim()));
  }

  /** A claim made from a VolumeSnapshot: a Cinder volume made from its snapshot. */
  private ProvisionResult restore(ProvisionRequest request, ClaimRef snapshot) {
    if (restores == null) {
      throw ProvisioningException.invalid(
          "this provisioner does not serve snapshots, so it cannot restore VolumeSnapshot "
              + snapshot);
    }
    VolumeSource source = restores.resolve(snapshot, request.claim());
    request.starting(" " + source.describe());
    return made(request, source);
  }

  @Override
  public void created(ProvisionRequest request, PersistentVolume pv) {
    volumes.settled(request.claim().getMetadata().getUid());
    housekeeping.handOver(pv);
    marking.mark(request.claim(), pv);
  }

  /**
   * A crash may have come between the PV and the rest: a clone gets its {@code k8s.io/CloneOf} and
   * its source loses the protection. Then a bound claim whose request grew is expanded.
   */
  @Override
  public Optional<java.time.Duration> provisioned(PersistentVolumeClaim claim) {
    Optional<ClaimRef> src;
    try {
      src = CloneResolver.requested(claim);
    } catch (ProvisioningException e) {
      src = Optional.empty(); // a bad clone request on a provisioned claim: nothing to finish
    }
    if (src.isPresent()) {
      marking.repair(claim);
      protection.unprotectIfCached(src.get(), claim.getMetadata().getUid());
    }
    return expansion.ifAsked(claim);
  }

  @Override
  public DeleteOutcome delete(PersistentVolume pv) {
    DeleteOutcome outcome = volumes.delete(pv);
    if (outcome.state() == DeleteOutcome.State.DELETED) {
      LOG.info(
          "deleted the volume of {} (Cinder volume {})",
          pv.getMetadata().getName(),
          pv.getMetadata().getAnnotations().get(ClaimAnnotations.VOLUME_ID));
    }
    return outcome;
  }

  @Override
  public String notMine(PersistentVolume pv) {
    Map<String, String> ann = pv.getMetadata().getAnnotations();
    String identity = ann == null ? null : ann.get(Names.ANN_IDENTITY);
    String volume = ann == null ? null : ann.get(ClaimAnnotations.VOLUME_ID);
    String left =
        volume == null
            ? "it names no Cinder volume, so nothing is deleted"
            : "its Cinder volume " + volume + " is left as it is";
    if (identity == null) {
      return "was released, but has no " + Names.ANN_IDENTITY + " annotation: " + left;
    }
    return "was released, but another provisioner instance made it (identity '"
        + identity
        + "'; this one is '"
        + settings.identity()
        + "'): "
        + left
        + ". If that provisioner is gone for good (the Go standalone-cinder took a new identity"
        + " at each start unless -id was set), take its PVs over: add the identity to"
        + " ADOPT_IDENTITIES (--adopt-identities; docs/migration.md)";
  }

  /**
   * The volume stays as it is, and must outlive the PV if an admin deletes it; a hand-over that
   * failed when the PV was made is repaired here, once.
   */
  @Override
  public void retained(PersistentVolume pv) {
    housekeeping.retained(pv);
  }

  @Override
  public void paused() {
    volumes.paused();
  }

  @Override
  public void forget(HasMetadata gone) {
    if (gone instanceof PersistentVolume pv) {
      housekeeping.forget(pv);
    } else if (gone instanceof PersistentVolumeClaim claim) {
      expansion.forget(claim);
      rememberSource(claim);
      Map<String, String> ann = claim.getMetadata().getAnnotations();
      if (ann != null
          && name().equals(ClaimAnnotations.provisioner(ann))
          && "restore".equals(kind(claim))
          && claim.getMetadata().getUid() != null) {
        // A restore from a backup that another process cut short leaves its volume under the
        // backup's identity, where no sweep finds it: the claim's deletion looks by its name.
        volumes.lookFor(claim.getMetadata().getUid());
      }
    }
  }

  /**
   * A clone of ours that goes: its source, for the release of its protection (SourceProtection).
   * Only ours: the entry goes when the protection is released, which only our claims' do.
   */
  private void rememberSource(PersistentVolumeClaim clone) {
    Map<String, String> ann = clone.getMetadata().getAnnotations();
    if (ann == null
        || !name().equals(ClaimAnnotations.provisioner(ann))
        || clone.getMetadata().getUid() == null) {
      return;
    }
    try {
      CloneResolver.requested(clone)
          .ifPresent(src -> protection.remember(src, clone.getMetadata().getUid()));
    } catch (ProvisioningException e) {
      // A clone request that names no claim: no source was ever protected for it.
    }
  }

  /**
   * Deletes what provisioning left for a claim gone without a PV: see {@link
   * Housekeeping#abandoned}.
   */
  @Override
  public Optional<java.time.Duration> abandoned(WorkKey.Claim claim, String claimUid) {
    return housekeeping.abandoned(claim, claimUid);
  }

  /** See {@link Housekeeping#run}. */
  @Override
  public List<Abandoned> housekeeping() {
    return housekeeping.run();
  }
}
