package org.standalonecinder.provisioner.controller;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.MicroTime;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.events.v1.Event;
import io.fabric8.kubernetes.api.model.events.v1.EventBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Clock;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes {@code events.k8s.io/v1} Events about claims and volumes (fabric8 has no recorder). An
 * Event that cannot be written is logged, never thrown: events inform, they do not decide.
 */
public class EventRecorder {

  /** Event reasons, as users and alerts see them. */
  public static final String PROVISIONING = "Provisioning";

  public static final String PROVISIONING_SUCCEEDED = "ProvisioningSucceeded";
  public static final String PROVISIONING_FAILED = "ProvisioningFailed";
  public static final String VOLUME_FAILED_DELETE = "VolumeFailedDelete";
  public static final String VOLUME_DELETED = "VolumeDeleted";

  /** A released PV of this provisioner's name that another instance made: left alone. */
  public static final String VOLUME_NOT_MINE = "VolumeNotMine";

  /** Where Events about cluster-scoped objects (PVs) are written. */
  public static final String CLUSTER_SCOPED_EVENTS = "kube-system";

  private static final Logger LOG = LoggerFactory.getLogger(EventRecorder.class);
  private static final int MAX_NOTE = 1024;
  private static final DateTimeFormatter MICRO =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'")
          .withZone(java.time.ZoneOffset.UTC);

  private final KubernetesClient client;
  private final String controller;
  private final String instance;
  private final Clock clock;

  public EventRecorder(KubernetesClient client, String controller, String instance, Clock clock) {
    this.client = client;
    this.controller = controller;
    this.instance = instance;
    this.clock = clock;
  }

  public void normal(HasMetadata about, String reason, String note) {
    record(about, "Normal", reason, note);
  }

  public void warning(HasMetadata about, String reason, String note) {
    record(about, "Warning", reason, note);
  }

  private final java.util.concurrent.atomic.AtomicLong lastNanos =
      new java.util.concurrent.atomic.AtomicLong();

  /** The clock in nanoseconds, never the same twice in this recorder. */
  private long uniqueNanos() {
    java.time.Instant t = clock.instant();
    long now = t.getEpochSecond() * 1_000_000_000L + t.getNano();
    return lastNanos.updateAndGet(last -> Math.max(last + 1, now));
  }

  /**
   * An event's name as Kubernetes' own recorders make it: the object's name, a dot, the time in hex
   * nanoseconds. A generateName of {@code name.} is what the API server refuses (a name may not end
   * in a dot, and the suffix it adds is checked after), and the whole must stay a DNS subdomain of
   * at most 253 characters.
   */
  static String name(String objectName, long nanos) {
    String suffix = "." + Long.toHexString(nanos);
    String base =
        objectName.length() + suffix.length() > 253
            ? objectName.substring(0, 253 - suffix.length())
            : objectName;
    // A cut may leave a dot or a dash at the end, which a subdomain label may not have.
    while (base.endsWith(".") || base.endsWith("-")) {
      base = base.substring(0, base.length() - 1);
    }
    return base + suffix;
  }

  private void record(HasMetadata about, String type, String reason, String note) {
    String ns = about.getMetadata().getNamespace();
    // Events about cluster-scoped objects (PVs) go to kube-system: an API server before 1.22
    // refuses an events.k8s.io Event about one anywhere else (422, "involvedObject.namespace ...
    // does not match event.namespace"), later ones take default too. kubectl describe finds
    // them in any namespace.
    String eventNs = ns == null ? CLUSTER_SCOPED_EVENTS : ns;
    String text = note.length() > MAX_NOTE ? note.substring(0, MAX_NOTE - 3) + "..." : note;
    Event e =
        new EventBuilder()
            .withNewMetadata()
            .withName(name(about.getMetadata().getName(), uniqueNanos()))
            .withNamespace(eventNs)
            .endMetadata()
            .withEventTime(
                new MicroTime(MICRO.format(clock.instant().truncatedTo(ChronoUnit.MICROS))))
            .withReportingController(controller)
            .withReportingInstance(instance)
            .withAction(reason)
            .withReason(reason)
            .withType(type)
            .withNote(text)
            .withRegarding(
                new ObjectReferenceBuilder()
                    .withApiVersion(about.getApiVersion())
                    .withKind(about.getKind())
                    .withNamespace(ns)
                    .withName(about.getMetadata().getName())
                    .withUid(about.getMetadata().getUid())
                    .withResourceVersion(about.getMetadata().getResourceVersion())
                    .build())
            .build();
    try {
      client.events().v1().events().inNamespace(eventNs).resource(e).create();
    } catch (RuntimeException ex) {
      LOG.warn(
          "cannot record event {} on {}/{}: {}",
          reason,
          about.getKind(),
          about.getMetadata().getName(),
          ex.getMessage());
    }
  }
}
