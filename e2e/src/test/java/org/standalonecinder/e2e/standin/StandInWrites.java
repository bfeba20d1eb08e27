package org.standalonecinder.e2e.standin;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * Carries out the rules' {@link Step}s with the admin's client (the real one runs with its own
 * ServiceAccount; the stand-in is test infrastructure, as the real one was here). Every change of
 * an object names the resource version it was decided on: a conflict ends the sync, which is
 * retried.
 */
final class StandInWrites {

  static final ResourceDefinitionContext SNAPSHOTS =
      context("VolumeSnapshot", "volumesnapshots", true);
  static final ResourceDefinitionContext CONTENTS =
      context("VolumeSnapshotContent", "volumesnapshotcontents", false);
  static final ResourceDefinitionContext CLASSES =
      context("VolumeSnapshotClass", "volumesnapshotclasses", false);

  /** What the stand-in's events name as their source: never to be taken for the real one. */
  static final String COMPONENT = "snapshot-controller-stand-in";

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(StandInWrites.class);

  private final KubernetesClient client;
  private final Consumer<String> lookAgain;

  /** Events posted already ({@code uid reason message}): the real one's recorder counts repeats. */
  private final Set<String> posted = ConcurrentHashMap.newKeySet();

  StandInWrites(KubernetesClient client, Consumer<String> lookAgain) {
    this.client = client;
    this.lookAgain = lookAgain;
  }

  private static ResourceDefinitionContext context(String kind, String plural, boolean namespaced) {
    return new ResourceDefinitionContext.Builder()
        .withGroup(Names.GROUP)
        .withVersion("v1")
        .withKind(kind)
        .withPlural(plural)
        .withNamespaced(namespaced)
        .build();
  }

  /**
   * Takes the steps in order.
   *
   * @return the first {@link Step.Retry}'s reason, or null when every step was taken
   */
  String take(Iterable<Step> steps) {
    for (Step step : steps) {
      if (step instanceof Step.Retry r) {
        return r.why();
      }
      take(step);
    }
    return null;
  }

  private void take(Step step) {
    if (step instanceof Step.Tolerant t) {
      try {
        take(t.step());
      } catch (KubernetesClientException e) {
        // The real one tells it and goes on (checkandRemovePVCFinalizer at the top of
        // syncSnapshot).
        event(t.told());
      }
    } else if (step instanceof Step.Finalizers f) {
      ObjectNode patch = guarded(f.resourceVersion());
      ((ObjectNode) patch.get("metadata")).set("finalizers", JSON.valueToTree(f.finalizers()));
      patch(f.target(), patch);
    } else if (step instanceof Step.SnapshotError e) {
      try {
        writeError(e);
      } catch (KubernetesClientException failed) {
        // The real one ignores a failed error write; its caller's own error brings the retry.
        LOG.debug(
            "snapshot-controller stand-in: the error of {} not written: {}",
            e.snapshot().key(),
            failed.getMessage());
      }
    } else if (step instanceof Step.FollowContent f) {
      GenericKubernetesResource fresh = snapshot(f.snapshot().namespace(), f.snapshot().name());
      ContentRules.Followed next =
          fresh == null ? null : ContentRules.follow(Snap.of(fresh), f.content());
      if (next != null) {
        writeStatus(fresh, next.status());
        for (String[] ev : next.events()) {
          event(
              new Step.Event(
                  Step.Target.snapshot(f.snapshot()), f.snapshot().uid(), ev[0], ev[1], ev[2]));
        }
      }
    } else if (step instanceof Step.BindContent b) {
      ObjectNode patch = guarded(b.content().resourceVersion());
      ObjectNode spec = patch.putObject("spec");
      spec.putObject("volumeSnapshotRef").put("uid", b.uid());
      if (b.className() != null) {
        spec.put("volumeSnapshotClassName", b.className());
      }
      patch(Step.Target.content(b.content().name()), patch);
    } else if (step instanceof Step.Annotate a) {
      ObjectNode patch = guarded(a.content().resourceVersion());
      ((ObjectNode) patch.get("metadata")).putObject("annotations").put(a.key(), a.value());
      patch(Step.Target.content(a.content().name()), patch);
    } else if (step instanceof Step.DeleteContent d) {
      client.genericKubernetesResources(CONTENTS).withName(d.name()).delete();
    } else if (step instanceof Step.Event e) {
      event(e);
    } else if (step instanceof Step.LookAgain l) {
      lookAgain.accept(l.snapshotKey());
    }
  }

  private void writeError(Step.SnapshotError e) {
    GenericKubernetesResource fresh = snapshot(e.snapshot().namespace(), e.snapshot().name());
    if (fresh == null) {
      return;
    }
    Map<String, Object> status =
        new java.util.LinkedHashMap<>(Maps.map(fresh.getAdditionalProperties().get("status")));
    status.put(
        "error",
        Map.of(
            "message",
            e.message(),
            "time",
            Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString()));
    if (e.setReadyFalse()) {
      status.put("readyToUse", false);
    }
    writeStatus(fresh, status);
  }

  GenericKubernetesResource snapshot(String namespace, String name) {
    return client.genericKubernetesResources(SNAPSHOTS).inNamespace(namespace).withName(name).get();
  }

  private void writeStatus(GenericKubernetesResource fresh, Map<String, Object> status) {
    fresh.setAdditionalProperty("status", status);
    client
        .genericKubernetesResources(SNAPSHOTS)
        .inNamespace(fresh.getMetadata().getNamespace())
        .resource(fresh)
        .updateStatus();
  }

  private static ObjectNode guarded(String resourceVersion) {
    ObjectNode patch = JSON.createObjectNode();
    patch.putObject("metadata").put("resourceVersion", resourceVersion);
    return patch;
  }

  private void patch(Step.Target t, ObjectNode patch) {
    PatchContext merge = PatchContext.of(PatchType.JSON_MERGE);
    String body = patch.toString();
    switch (t.kind()) {
      case "VolumeSnapshot" ->
          client
              .genericKubernetesResources(SNAPSHOTS)
              .inNamespace(t.namespace())
              .withName(t.name())
              .patch(merge, body);
      case "VolumeSnapshotContent" ->
          client.genericKubernetesResources(CONTENTS).withName(t.name()).patch(merge, body);
      case "PersistentVolumeClaim" ->
          client
              .persistentVolumeClaims()
              .inNamespace(t.namespace())
              .withName(t.name())
              .patch(merge, body);
      default -> throw new IllegalArgumentException(t.kind());
    }
  }

  /**
   * A core/v1 Event, as client-go's recorder makes it, once per object, reason and message (failed
   * posts are tried again with the next sync).
   */
  private void event(Step.Event e) {
    String mark = e.target() + " " + e.uid() + " " + e.reason() + " " + e.message();
    if (posted.contains(mark)) {
      return;
    }
    Step.Target t = e.target();
    String namespace = t.namespace() == null ? "default" : t.namespace();
    String now = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
    var event =
        new EventBuilder()
            .withNewMetadata()
            .withNamespace(namespace)
            .withName(t.name() + "." + Long.toHexString(System.nanoTime()))
            .endMetadata()
            .withInvolvedObject(
                new ObjectReferenceBuilder()
                    .withApiVersion(Names.GROUP + "/v1")
                    .withKind(t.kind())
                    .withNamespace(t.namespace())
                    .withName(t.name())
                    .withUid(e.uid())
                    .build())
            .withType(e.type())
            .withReason(e.reason())
            .withMessage(e.message())
            .withNewSource()
            .withComponent(COMPONENT)
            .endSource()
            .withFirstTimestamp(now)
            .withLastTimestamp(now)
            .withCount(1)
            .build();
    try {
      client.v1().events().inNamespace(namespace).resource(event).create();
      posted.add(mark);
    } catch (KubernetesClientException failed) {
      // client-go's recorder posts in the background and never fails a sync: told again next time.
      LOG.debug(
          "snapshot-controller stand-in: event {} on {} not posted: {}",
          e.reason(),
          t,
          failed.getMessage());
    }
  }
}
